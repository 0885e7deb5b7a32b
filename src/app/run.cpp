#include "app/run.hpp"

#include <spdlog/spdlog.h>

#include <omp.h>

#include <cmath>
#include <future>
#include <optional>
#include <stdexcept>

#include "app/backend.hpp"
#include "app/exit_codes.hpp"
#include "app/export_system.hpp"
#include "app/heatmap.hpp"
#include "mna/host_memory.hpp"
#include "app/output_file.hpp"
#include "app/parked_names.hpp"
#include "app/parked_offsets.hpp"
#include "app/png_writer.hpp"
#include "app/progress.hpp"
#include "app/report.hpp"
#include "app/solve_error.hpp"
#include "app/thread_budget.hpp"
#include "app/transient_run.hpp"
#include "app/voltage_file.hpp"
#include "mna/chain_elimination.hpp"
#include "mna/reduce.hpp"
#include "mna/stopwatch.hpp"
#include "mna/touched_vector.hpp"
#include "parser/input_error.hpp"
#include "parser/netlist.hpp"
#include "pcg/direct.hpp"
#include "pcg/pcg_cpu.hpp"
#include "pcg/preconditioner_factory.hpp"
#include "pcg/vector_ops.hpp"

namespace pgsim {
namespace {

// -v: where the host memory goes, phase by phase (bytes per netlist node, the measure).
void log_memory(const char* after, int64_t nodes) {
  if (!spdlog::default_logger()->should_log(spdlog::level::debug)) return;
  const HostMemory m = host_memory();
  const double per_node = nodes > 0 ? 1.0 / double(nodes) : 0.0;
  spdlog::debug("memory after {}: {:.0f} MB resident ({:.0f} B/node), peak {:.0f} MB ({:.0f} B/node)", after,
                double(m.resident) / 1e6, double(m.resident) * per_node, double(m.peak) / 1e6,
                double(m.peak) * per_node);
}

// The whole solve as the one rank of a single-process run.
dist::RankStats one_rank(const CsrMatrix& G, const RunReport& rep) {
  dist::RankStats r;
  r.unknowns = G.rows;
  r.nnz = G.nnz();
  r.peak_host_bytes = host_memory().peak;
  r.peak_device_bytes = rep.peak_device_bytes;
  r.seconds = rep.time.setup + rep.time.upload + rep.time.solve;
  return r;
}

}  // namespace

void release_elements(Netlist& netlist) {
  decltype(netlist.elements)().swap(netlist.elements);
  netlist.element_names = NameTable();
  decltype(netlist.named_elements)().swap(netlist.named_elements);
}

RunReport run(const Options& opt, RunData* data) {
  RunData own;
  RunData& keep = data ? *data : own;
  RunReport rep;
  rep.netlist = opt.netlist;
  Stopwatch total, phase;
  const bool context_ahead = gpu_likely(opt);
  const GpuContextWarmUp warm_up(context_ahead);
  // Threads follow the work (app/thread_budget.hpp): the parse's from the text size where it is
  // known ahead, every later phase's from the node count; a core is left to the warm-up while it runs.
  ThreadCountScope threads;
  const std::optional<uint64_t> text_bytes = netlist_text_bytes(opt.netlist);
  rep.parse_threads = threads.limit_to(text_bytes.value_or(UINT64_MAX), kParseBytesPerThread, warm_up.busy_cores());

  // Check the outputs and read the reference first: a bad path should fail before a long solve.
  for (const std::string* path : {&opt.output, &opt.json})
    if (!path->empty()) check_writable(*path);
  if (!opt.export_prefix.empty())
    for (const std::string& path : export_paths(opt.export_prefix)) check_writable(path);
  if (!opt.heatmap.empty() && !png_supported()) throw InputError("--heatmap: this pgsim was built without libpng");

  ParseOptions parse_options;
  ProgressLine parse_progress(progress_wanted(opt.quiet));
  parse_options.progress = show_parse_progress;
  parse_options.progress_user = &parse_progress;
  // A DC run shows only merging elements' names (keep_merging_names() below) and the duplicates';
  // a reader that takes a transient netlist keeps every name (the GPU reader takes none).
  parse_options.dc_names_only = true;
  keep.netlist = read_netlist(opt, parse_options, text_bytes, context_ahead, rep.parse_on_gpu);
  Netlist& netlist = keep.netlist;
  parse_progress.finish();
  rep.time.parse = phase.lap();
  rep.bytes = netlist.bytes_read;
  rep.nodes = netlist.node_count() - 1;
  rep.threads = threads.limit_to(uint64_t(rep.nodes), kNodesPerThread, warm_up.busy_cores());
  spdlog::info("parsed {}: {} elements, {} nodes, {:.1f} MB in {:.3f} s", opt.netlist, netlist.elements.size(),
               rep.nodes, double(rep.bytes) / 1e6, rep.time.parse);
  log_memory("parse", rep.nodes);

  if (netlist.transient.tran && !opt.dc_only && opt.export_prefix.empty()) {
    if (netlist.names_thinned) throw std::logic_error("a transient netlist came back with thinned element names");
    run_transient(opt, netlist, rep, phase, threads.cap());
    rep.time.total = total.lap();
    if (!opt.json.empty()) write_json(opt.json, rep);
    return rep;
  }
  if (opt.tstep > 0 && !netlist.transient.tran) throw InputError("--tstep: " + opt.netlist + " has no .tran line");
  MatchedReference reference;
  if (!opt.compare.empty()) reference = match_reference(netlist, read_voltages(opt.compare));
  // Nothing after this looks a node up by name (outputs read names by id): the index (about 20 B
  // per node) is freed before reduce and the solver's setup make theirs.
  netlist.node_names.drop_index();
  {  // the merging elements found once, for the names kept and for reduce(), and freed after it
    const MergingElements merging = merging_elements(netlist, nullptr);
    keep_merging_names(netlist, merging);  // the only element names reduce() may show
    log_memory("name index dropped and element names thinned", rep.nodes);
    keep.system = reduce(netlist, nullptr, merging);
  }
  ReducedSystem& sys = keep.system;
  SupplyNets nets = supply_nets(netlist);
  release_elements(netlist);  // from here on only the node names are needed
  rep.time.reduce = phase.lap();
  rep.unknowns = sys.unknowns();
  rep.nnz = sys.G.nnz();
  spdlog::info("reduced to {} unknowns, {} nonzeros in {:.3f} s", rep.unknowns, rep.nnz, rep.time.reduce);
  log_memory("reduce", rep.nodes);

  if (!opt.export_prefix.empty()) {  // the system as reduce() made it, before any later transformation
    export_system(opt.export_prefix, netlist, sys);
    spdlog::info("exported the system to {}.{{G.mtx,b.mtx,nodes.txt}} in {:.3f} s", opt.export_prefix, phase.lap());
    if (opt.export_only) {
      rep.method = "none";
      rep.time.total = total.lap();
      if (!opt.json.empty()) write_json(opt.json, rep);
      return rep;
    }
  }

  // For names in messages and exports, neither of which comes after this: freed (4 B per unknown).
  FillVector<uint32_t>().swap(sys.node_of_unknown);
  // Read again only by the write phase, and zero at nearly every node: parked until then.
  ParkedOffsets offsets = park_offsets(sys.offset_of_node);
  spdlog::debug("node offsets parked: {} of {} not zero", offsets.index.size(), offsets.size);
  // Read again only by the outputs: parked (app/parked_names.hpp) through the solve's setup and PCG.
  const uint64_t name_chars = netlist.node_names.arena_bytes();
  Stopwatch parking;
  ParkedNames names = park_names(netlist.node_names);
  spdlog::debug("node names parked in {:.3f} s: {} names, {:.1f} MB from {:.1f} MB", parking.lap(), names.count,
                double(names.bytes.size()) / 1e6, double(name_chars + 8 * (uint64_t(names.count) + 1)) / 1e6);
  bool parked = true;
  auto restore_parked = [&] {
    Stopwatch restoring;
    restore_offsets(offsets, sys.offset_of_node);
    restore_names(names, netlist.node_names);
    parked = false;
    spdlog::debug("node offsets and names restored in {:.3f} s", restoring.lap());
  };
  std::vector<double>& x = keep.x;  // every unknown's voltage, filled after the solve (not held through setup and PCG)
  rep.backend = "cpu";
  if (opt.solver == "direct") {
    rep.method = "direct";
    rep.precond = direct_solver_name();
    phase.lap();
    rep.result = solve_direct(sys.G, sys.b, x);
    rep.time.solve = phase.lap();
    rep.per_rank = {one_rank(sys.G, rep)};
  } else if (opt.solver == "pcg") {
    rep.method = "pcg";
    rep.precond = opt.precond.empty() ? cpu_preconditioner_names().front() : opt.precond;
    if (rep.precond == "cmg") rep.smoother = opt.smoother;
    std::optional<EliminatedSystem> chains;
    // The whole system's G is read again only by the residual check after the solve: packed
    // (mna/packed_symmetric.hpp) through the CMG build and the PCG, where the memory peaks.
    std::optional<PackedSymmetric>& packed_G = keep.packed_G;
    if (opt.eliminate) {
      Stopwatch packing;
      packed_G = pack_symmetric(sys.G);
      const double packed = packing.lap();
      // Packed, G's own arrays become the elimination's work space (no copy of them beside G).
      chains = packed_G ? eliminate_chains(std::move(sys.G), sys.b) : eliminate_chains(sys.G, sys.b);
      rep.eliminated = chains->eliminated();
      rep.time.eliminate = phase.lap();
      spdlog::info("eliminated {} chain unknowns exactly, {} remain, in {:.3f} s", rep.eliminated, chains->G.rows,
                   rep.time.eliminate);
      spdlog::debug("the whole system's G {} in {:.3f} s", packed_G ? "packed" : "not packed (not symmetric)", packed);
      log_memory("eliminate", rep.nodes);
    }
    const CsrMatrix& G = chains ? chains->G : sys.G;
    const std::vector<double>& b = chains ? chains->b : sys.b;
    SolveControl control;
    // The kept rows' residual is the whole residual of G x = b: scale the tolerance to its b.
    const double b_norm = std::sqrt(dot(sys.b, sys.b)), kept_norm = std::sqrt(dot(b, b));
    control.tolerance = kept_norm > 0 ? opt.tolerance * b_norm / kept_norm : opt.tolerance;
    const BackendChoice choice = choose_backend(opt.backend, G.rows, context_ahead);
    rep.backend = choice.backend;
    rep.backend_reason = choice.reason;
    // Where the GPU builds the hierarchy on the device (gpu/cmg_build.hpp), the host's memory after
    // the elimination stays below the reduction's peak, parked arrays or not.
    const bool host_hierarchy = rep.backend != "gpu" || !gpu_builds_hierarchy(opt, rep, G.rows);
    // With chains eliminated the whole system's b is read again only by the residual check: parked
    // through a hierarchy's build on the host.
    std::optional<ParkedOffsets> whole_b;
    if (chains && host_hierarchy) {
      whole_b = park_offsets(sys.b);
      spdlog::debug("the whole system's b parked: {} of {} not zero", whole_b->index.size(), whole_b->size);
    }
    control.max_iterations = opt.max_iterations;
    // The first iterate, zeros in pages faulted in by all threads: sized once the preconditioner
    // is built (here or in solve_pcg_on_gpu), so not held through the build.
    std::vector<double> x_kept;
    ProgressLine solve_progress(progress_wanted(opt.quiet));
    control.progress = solve_progress_callback(solve_progress);
    if (opt.backend == "auto") spdlog::info("{}: solving on the {}", choice.reason, choice.backend);
    // While the GPU builds the hierarchy and solves, the host's cores are idle: the node offsets
    // and names are restored meanwhile, beside the thread that drives the GPU and the driver's.
    std::future<void> restored;
    if (rep.backend == "gpu" && !host_hierarchy)
      restored = std::async(std::launch::async, [&, threads = std::max(1, omp_get_max_threads() - 2)] {
        omp_set_num_threads(threads);
        restore_parked();
      });
    // The GPU times its own setup, upload and solve; under --backend auto a GPU failure falls back here.
    const bool on_gpu = rep.backend == "gpu" && solve_pcg_on_gpu(G, b, x_kept, control, opt, rep);
    if (restored.valid()) restored.get();
    if (rep.backend == "gpu" && !on_gpu) {
      rep.backend = "cpu";
      rep.backend_reason = "auto: the GPU failed during the solve (see the warning)";
    }
    if (rep.backend == "gpu") {
      phase.lap();
    } else {
      auto M = make_cpu_preconditioner(rep.precond, G, cmg_options(opt));
      rep.time.setup = phase.lap();
      log_memory("setup", rep.nodes);
      assign_touched(x_kept, static_cast<size_t>(G.rows));
      rep.result = pcg_cpu(G, b, x_kept, *M, control);
      rep.levels = M->levels();
      rep.time.solve = phase.lap();
    }
    rep.per_rank = {one_rank(G, rep)};
    solve_progress.finish();
    log_memory("solve", rep.nodes);
    if (chains) {
      chains->recover(x_kept, x);  // x: sized there
      if (whole_b) restore_offsets(*whole_b, sys.b);
      rep.result.relative_residual =
          packed_G ? relative_residual(*packed_G, sys.b, x) : relative_residual(sys.G, sys.b, x);
      rep.result.converged = rep.result.relative_residual <= opt.tolerance;
      rep.time.recover = phase.lap();
      log_memory("recovery and the residual check", rep.nodes);
      spdlog::debug("recovered the eliminated unknowns and checked the whole system's residual in {:.4f} s",
                    rep.time.recover);
    } else {
      x = std::move(x_kept);
    }
  } else {
    throw InputError("unknown solver '" + opt.solver + "' (pcg or direct)");
  }
  if (parked) restore_parked();
  spdlog::info("{} ({}{}) on the {}: {} iterations, relative residual {:.3e}, {:.3f} s", rep.method, rep.precond,
               rep.smoother.empty() ? "" : ", " + rep.smoother + " smoother",
               rep.backend, rep.result.iterations, rep.result.relative_residual, rep.time.solve);

  if (!rep.result.converged) {
    rep.time.total = total.lap();
    if (!opt.json.empty()) write_json(opt.json, rep);
    throw SolveError(fmt::format("{} did not converge: relative residual {:.3e} after {} iterations, tolerance {:.1e} "
                                 "(raise --max-iter or try another --precond); no voltages written",
                                 rep.method, rep.result.relative_residual, rep.result.iterations, opt.tolerance));
  }

  Stopwatch step;  // -v: the write phase's parts
  keep.voltages = node_voltages(sys, x);
  const std::vector<double>& voltages = keep.voltages;
  std::optional<OutputFile> voltages_file;
  std::future<void> committed;
  if (!opt.output.empty()) {
    voltages_file.emplace(opt.output);
    write_voltages(*voltages_file, netlist, voltages);
    // Committing flushes the file to disk (fsync) and renames it: a wait for the device, not work
    // for a core, so it runs on a thread of its own beside the IR-drop summary.
    committed = std::async(std::launch::async, [&voltages_file] { voltages_file->commit(); });
  }
  const double written = step.lap();
  keep.deviations = node_deviations(std::move(nets), sys, voltages);
  const NodeDeviations& deviations = keep.deviations;
  log_memory("voltages and deviations", rep.nodes);
  rep.ir_drop = summarize_ir_drop(netlist, deviations);
  const double summarized = step.lap();
  if (committed.valid()) committed.get();  // a failed flush or rename is thrown here
  spdlog::debug("voltages computed and written in {:.3f} s, IR-drop summary in {:.3f} s, the voltages file's "
                "commit (flush to disk, rename) done {:.3f} s after that",
                written, summarized, step.lap());
  if (!opt.heatmap.empty()) {
    const auto maps = write_heatmaps(opt.heatmap, netlist, deviations);
    if (maps.empty()) spdlog::warn("--heatmap: no supplied node is named n<layer>_<x>_<y>, so there is nothing to draw");
    for (const auto& path : maps) spdlog::info("wrote {}", path);
  }
  rep.time.write = phase.lap();
  log_memory("write", rep.nodes);
  if (!opt.compare.empty()) rep.comparison = compare_voltages(netlist, voltages, reference);
  rep.time.total = total.lap();
  rep.peak_host_bytes = host_memory().peak;
  for (dist::RankStats& r : rep.per_rank) r.peak_host_bytes = rep.peak_host_bytes;  // the whole run's, as a rank's
  if (!opt.json.empty()) write_json(opt.json, rep);
  return rep;
}

}  // namespace pgsim
