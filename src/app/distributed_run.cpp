#include "app/distributed_run.hpp"

#include <spdlog/spdlog.h>

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/backend.hpp"
#include "app/distributed_voltages.hpp"
#include "app/exit_codes.hpp"
#include "app/output_file.hpp"
#include "app/parked_names.hpp"
#include "app/progress.hpp"
#include "app/report.hpp"
#include "app/solve_error.hpp"
#include "app/thread_budget.hpp"
#include "dist/collective_error.hpp"
#include "dist/direct_reads.hpp"
#include "dist/distributed_parse.hpp"
#include "dist/distributed_reduce.hpp"
#include "dist/distributed_solve.hpp"
#include "dist/host_ranks.hpp"
#include "dist/process_age.hpp"
#include "dist/step_log.hpp"
#ifdef PGSIM_HAVE_CUDA
#include "gpu/gpu_parse.hpp"
#endif
#ifdef PGSIM_HAVE_NCCL
#include "gpu/nccl_comm_ahead.hpp"
#endif
#include "mna/host_memory.hpp"
#include "mna/stopwatch.hpp"
#include "parser/input_error.hpp"
#include "pcg/preconditioner_factory.hpp"

namespace pgsim {
namespace {

#ifndef PGSIM_HAVE_NCCL
// What this build lacks for a distributed GPU solve (NCCL is looked for only with CUDA and MPI).
std::string missing_for_distributed_gpu() {
#ifdef PGSIM_HAVE_CUDA
  return "NCCL: no nccl.h and libnccl were found";
#else
  return "CUDA and NCCL";
#endif
}
#endif

// What a distributed run does not do; the same verdict on every rank (the same command line).
void check_distributed_options(const Options& opt, int ranks) {
  const std::string job = "mpirun with " + std::to_string(ranks) + " ranks: ";
  const auto refuse = [&](const std::string& what) { throw InputError(job + what + " runs in one process only"); };
  if (opt.solver != "pcg") refuse("--solver " + opt.solver);
  if (!opt.compare.empty()) refuse("--compare");
  if (!opt.heatmap.empty()) refuse("--heatmap");
  if (!opt.export_prefix.empty()) refuse("--export-system");
  if (opt.netlist == "-") refuse("reading the netlist from standard input");
#ifndef PGSIM_HAVE_CUDA
  if (opt.parse == "gpu") throw InputError("--parse gpu: this pgsim was built without CUDA");
#endif
#ifndef PGSIM_HAVE_NCCL
  if (opt.backend == "gpu")
    throw InputError(job + "--backend gpu needs a pgsim built with CUDA, MPI and NCCL (this one lacks " +
                     missing_for_distributed_gpu() + ")");
#endif
}

#ifdef PGSIM_HAVE_CUDA
// Each rank's range read on its GPU (gpu/gpu_parse.hpp), device `device`, where --parse asks for
// it by one process's rule for its whole file (app/backend.hpp gpu_parse_wanted; a GPU run makes
// its context beside the parse), its node names left there (dist/node_names_on_device.hpp), and
// in a GPU run, whose reduction runs there too, its elements (dist/elements_on_device.hpp). Where
// the reader declines or fails, the rank reads its range on the CPU. `on_gpu` is set where it did.
dist::PartReader gpu_part_reader(const Options& opt, bool gpu_run, int device, bool& on_gpu) {
  if (!gpu_parse_wanted(opt.parse, gpu_run, UINT64_MAX)) return {};  // no range is
  return [parse = opt.parse, gpu_run, device, &on_gpu](const std::string& path, uint64_t begin, uint64_t end,
                                                       const ParseOptions& options, NetlistPart& part,
                                                       std::unique_ptr<dist::NodeNamesOnDevice>& names,
                                                       std::shared_ptr<dist::ElementsOnDevice>& elements) {
    if (!gpu_parse_wanted(parse, gpu_run, end - begin)) return false;
    std::string why;
    gpu::GpuParseTimes t;
    try {
      // The node names stay on the GPU, where the node ids are numbered if every rank's range is read there.
      if (gpu::parse_netlist_part_on_gpu(path, begin, end, options, device, part, why, &t, &names,
                                         gpu_run ? &elements : nullptr)) {
        spdlog::debug("range [{}, {}) parsed on GPU {}: {}", begin, end, device, t.text());
        on_gpu = true;
        return true;
      }
      spdlog::info("the GPU netlist reader declined the range [{}, {}) of {}: {}; reading it on the CPU", begin, end,
                   path, why);
    } catch (const std::exception& e) {  // a GpuError, or memory: the CPU parse follows
      spdlog::warn("the GPU netlist reader failed on the range [{}, {}) of {} ({}); reading it on the CPU", begin, end,
                   path, e.what());
    }
    return false;
  };
}
#endif

#ifdef PGSIM_HAVE_NCCL
// What a GPU rank keeps after its solve (DistributedRunData::gpu): the solve's device objects,
// released (where they are: a run that keeps no data) before the communicator they use.
struct KeptGpu {
  std::unique_ptr<gpu::NcclCommAhead> nccl;
  std::shared_ptr<void> solve;
};
#endif

// A failure of this rank alone inside collective work: the other ranks would wait forever.
[[noreturn]] void end_job(const dist::MpiSession& mpi, const char* during, const std::exception& e) {
  spdlog::error("rank {} failed during {}: {}", mpi.rank(), during, e.what());
  mpi.abort(kExitSystem);
}

// Sets this rank's OpenMP threads to its share of its host's cores (app/thread_budget.hpp
// rank_threads; a GPU rank's whole share, `gpu`); where the launcher bound the ranks to fewer
// cores than that, rank 0 says how to give them their share (collective).
void default_rank_threads(const dist::MpiSession& mpi, const dist::HostRanks& host, bool gpu) {
  const int host_cores = int(sysconf(_SC_NPROCESSORS_ONLN));
  const RankThreads t = rank_threads(host_cores, host.size, omp_get_num_procs(), !gpu);
  omp_set_num_threads(t.threads);
  int least[2] = {t.bound_below_share() ? t.threads : INT_MAX, t.threads};  // a bound rank's threads; any rank's
  MPI_Allreduce(MPI_IN_PLACE, least, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (mpi.is_root() && least[0] != INT_MAX)
    spdlog::warn("ranks run on as few as {} thread(s): mpirun bound them to fewer cores than their share of their host "
                 "(rank 0: {} cores, {} ranks, {} threads each). Start mpirun with --bind-to none (pgsim shares the "
                 "cores out), or give the threads with OMP_NUM_THREADS or --threads",
                 least[0], host_cores, host.size, t.share);
  else
    spdlog::debug("threads per rank: {} at least (rank 0: {} of its host's {} cores, {} ranks there)", least[1],
                  t.threads, host_cores, host.size);
}

}  // namespace

RunReport run_distributed(const Options& opt, const dist::MpiSession& mpi, DistributedRunData* data,
                          const GpuContextWarmUp* early) {
  DistributedRunData own;
  DistributedRunData& keep = data ? *data : own;
  RunReport rep;
  rep.netlist = opt.netlist;
  rep.ranks = mpi.size();
  check_distributed_options(opt, mpi.size());
  dist::share_step_log(MPI_COMM_WORLD);  // -v: every rank's step lines, logged by rank 0
  const char* pml = std::getenv("OMPI_MCA_pml");  // ob1 where pgsim chose it (dist::prefer_shared_memory_transports)
  dist::log_step(MPI_COMM_WORLD, fmt::format("rank {}: its run began {:.2f} s after its process started (loading, MPI_Init{})",
                                             mpi.rank(), dist::process_age_seconds(),
                                             pml ? std::string(", Open MPI's pml ") + pml : std::string()));
  Stopwatch total, phase;
  // A bad output path fails before the long work, on every rank alike.
  dist::agree_on_failure(MPI_COMM_WORLD, [&] {
    if (!mpi.is_root()) return;
    for (const std::string* path : {&opt.output, &opt.json})
      if (!path->empty()) check_writable(*path);
  });

  const dist::HostRanks host = dist::host_ranks(MPI_COMM_WORLD);
  if (mpi.size() > 1) {  // collective; -v: how the exchanges between ranks of one host go (dist/direct_reads.hpp)
    const bool direct = dist::host_peers(MPI_COMM_WORLD).readable;
    if (mpi.is_root() && host.size > 1)
      spdlog::debug("exchanges between ranks of one host: {}", direct ? "read by the receiver on all its threads"
                                                                      : "MPI messages (the kernel refused direct reads)");
  }
  const bool gpu = opt.backend == "gpu";
  if (opt.threads == 0 && std::getenv("OMP_NUM_THREADS") == nullptr) default_rank_threads(mpi, host, gpu);
  // With --backend gpu each rank's CUDA context is created beside the parse, as one process's is
  // (app/backend.hpp), on the device its solve will take (its place among its host's ranks,
  // gpu/nccl_comm.hpp): begun before MPI_Init where the launcher named that place (main.cpp). The
  // parse leaves that thread a core while it works (app/thread_budget.hpp).
  std::optional<GpuContextWarmUp> own_warm_up;
  const bool early_fits = gpu && early != nullptr && early->device() == host.rank;
  const GpuContextWarmUp& warm_up = early_fits ? *early : own_warm_up.emplace(gpu, gpu ? host.rank : 0, true);
  if (gpu && early != nullptr && !early_fits)
    spdlog::debug("rank {}: the launcher's local rank {} is not its place {} among its host's ranks: its device's "
                  "context begun again", mpi.rank(), early->device(), host.rank);
#ifdef PGSIM_HAVE_NCCL
  // The NCCL communicator (gpu/nccl_comm_ahead.hpp), kept with the solve's device objects: agreed
  // on here, made from the parse's end.
  std::unique_ptr<gpu::NcclCommAhead> nccl;
  if (gpu) {
    try {
      nccl = std::make_unique<gpu::NcclCommAhead>(MPI_COMM_WORLD);
    } catch (const std::exception& e) {
      end_job(mpi, "the NCCL communicator's setup", e);
    }
  }
#endif
  ThreadCountScope threads;
  omp_set_num_threads(std::max(1, threads.cap() - warm_up.busy_cores()));
  rep.parse_threads = omp_get_max_threads();
  ParseOptions parse_options;
  ProgressLine parse_progress(mpi.is_root() && progress_wanted(opt.quiet));
  parse_options.progress = show_parse_progress;
  parse_options.progress_user = &parse_progress;
  parse_options.dc_names_only = true;  // a distributed run is DC: only the super-nodes' loop message names elements
  dist::RankNetlist& netlist = keep.netlist;
  bool range_on_gpu = false;
#ifdef PGSIM_HAVE_CUDA
  const dist::PartReader read_part = gpu_part_reader(opt, gpu, host.rank, range_on_gpu);
#else
  const dist::PartReader read_part;
#endif
  netlist = dist::parse_distributed(opt.netlist, MPI_COMM_WORLD, parse_options, {}, read_part);
  parse_progress.finish();
  int ranges_on_gpu = range_on_gpu ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &ranges_on_gpu, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  rep.parse_on_gpu = ranges_on_gpu == mpi.size();  // --json parse_on: gpu where every rank's range was
  if (ranges_on_gpu > 0) spdlog::info("{} of {} ranks read their ranges on their GPUs", ranges_on_gpu, mpi.size());
  rep.time.parse = phase.lap();
  rep.nodes = int64_t(netlist.total_nodes) - 1;
  int nccl_busy = 0;  // the communicator's thread, at work through the reduction and setup: a core left to it
#ifdef PGSIM_HAVE_NCCL
  if (nccl) {
    try {
      nccl->start();
    } catch (const std::exception& e) {
      end_job(mpi, "the NCCL communicator's setup", e);
    }
    nccl_busy = nccl->busy_cores();
  }
#endif
  omp_set_num_threads(std::max(1, threads.cap() - warm_up.busy_cores() - nccl_busy));
  rep.threads = omp_get_max_threads();
  uint64_t bytes = netlist.bytes_read;
  MPI_Allreduce(MPI_IN_PLACE, &bytes, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  rep.bytes = bytes;
  spdlog::info("parsed {} on {} ranks: {} nodes, {:.1f} MB in {:.3f} s (rank 0: {} elements, {} nodes of its own)",
               opt.netlist, mpi.size(), rep.nodes, double(rep.bytes) / 1e6, rep.time.parse, netlist.element_count(),
               netlist.owned());

  dist::RankSystem& sys = keep.system;
  // The owned node names are read again only by the voltages file: parked (app/parked_names.hpp)
  // from the stamp's end through the solve, as one process parks its node names.
  ParkedNames owned_names;
  double park_seconds = 0;
  // A GPU rank stamps its rows on its GPU (dist/owned_rows.hpp): on one host the ranks share the
  // cores, and the second GPU is what a second rank adds. (A build without NCCL refused --backend
  // gpu above.)
  const int stamp_device = gpu ? host.rank : -1;
  try {
    // Element names are read only by the super-nodes' loop message, elements until the rows are
    // stamped: each is released as soon as it is done with, the names before the stamp, where a
    // rank's host memory peaks.
    sys = dist::reduce_distributed(
        netlist, MPI_COMM_WORLD, true,
        [&] {
          netlist.element_names = NameTable();
          decltype(netlist.named_elements)().swap(netlist.named_elements);
        },
        [&] {
          decltype(netlist.elements)().swap(netlist.elements);
          netlist.device_elements.reset();
          Stopwatch parking;
          owned_names = park_names(netlist.owned_names);
          park_seconds = parking.lap();
        },
        stamp_device);
  } catch (const InputError&) {
    throw;  // reduce()'s errors are thrown on every rank (distributed_reduce.hpp)
  } catch (const std::exception& e) {
    end_job(mpi, "the distributed reduction", e);
  }
  rep.time.reduce = phase.lap();
  rep.unknowns = sys.unknown_begin.back();
  rep.nnz = sys.reduced_nnz;
  rep.eliminated = rep.unknowns - sys.block.global_rows;
  spdlog::info("reduced to {} unknowns, {} nonzeros, partitioned and {} chain unknowns eliminated, {} remain, in {:.3f} s",
               rep.unknowns, rep.nnz, rep.eliminated, sys.block.global_rows, rep.time.reduce);

  rep.method = "pcg";
  rep.precond = opt.precond.empty() ? cpu_preconditioner_names().front() : opt.precond;
  if (rep.precond == "cmg") rep.smoother = opt.smoother;
  dist::BlockBackend backend{opt.backend == "gpu", opt.spmv, opt.profile};
#ifdef PGSIM_HAVE_NCCL
  if (nccl) {
    std::vector<int> peers;
    for (const dist::Neighbor& nb : sys.block.neighbors) peers.push_back(nb.rank);
    nccl->connect(std::move(peers));  // beside the preconditioner's build
  }
  backend.nccl = nccl.get();
#endif
  rep.backend = backend.gpu ? "gpu" : "cpu";
  rep.backend_reason = "mpirun with " + std::to_string(rep.ranks) + " ranks: " +
                       (backend.gpu ? "every rank on its own GPU" : "the distributed solve runs on the CPU unless --backend gpu");
  // The kept system's residual is the whole system's: the tolerance scaled to its b, as in one process.
  double kept_norm = 0;
  for (double v : sys.block.b) kept_norm += v * v;
  MPI_Allreduce(MPI_IN_PLACE, &kept_norm, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  kept_norm = std::sqrt(kept_norm);
  SolveControl control;
  control.tolerance = kept_norm > 0 ? opt.tolerance * sys.b_norm / kept_norm : opt.tolerance;
  control.max_iterations = opt.max_iterations;
  ProgressLine solve_progress(mpi.is_root() && progress_wanted(opt.quiet));
  if (mpi.is_root()) control.progress = solve_progress_callback(solve_progress);
  dist::BlockSolve solved;
  try {
    solved = dist::solve_block(sys.block, control, {rep.precond, cmg_options(opt), opt.coarse_layers}, backend);
  } catch (const std::exception& e) {
    end_job(mpi, "the distributed solve", e);
  }
#ifdef PGSIM_HAVE_NCCL
  if (nccl) keep.gpu = std::make_shared<KeptGpu>(KeptGpu{std::move(nccl), std::move(solved.device_state)});
  // The solve waited for the communicator's thread: its core is the recovery's and the file's again.
  if (nccl_busy) omp_set_num_threads(std::max(1, threads.cap() - warm_up.busy_cores()));
#endif
  solve_progress.finish();
  rep.result = solved.result;
  if (kept_norm > 0 && sys.b_norm > 0) rep.result.relative_residual *= kept_norm / sys.b_norm;
  rep.result.converged = rep.result.relative_residual <= opt.tolerance;
  rep.time.setup = solved.setup_seconds;
  rep.time.upload = solved.upload_seconds;
  rep.time.solve = solved.solve_seconds;
  rep.levels = std::move(solved.levels);
  rep.device = solved.device;
  // Every rank's figures on rank 0 (collective), its peak host memory the run's so far.
  const auto gather_ranks = [&] {
    solved.stats.peak_host_bytes = host_memory().peak;
    rep.per_rank = dist::gather_rank_stats(solved.stats, MPI_COMM_WORLD);
    for (const dist::RankStats& r : rep.per_rank) rep.peak_device_bytes = std::max(rep.peak_device_bytes, r.peak_device_bytes);
  };
  if (solved.coarse_unknowns > 0)
    spdlog::info("global coarse correction: {} coarse unknowns, {} entries in their Cholesky factor (on every rank)",
                 solved.coarse_unknowns, solved.coarse_factor_nnz);
  spdlog::info("pcg ({}{}) on {} ranks ({}): {} iterations, relative residual {:.3e}, {:.3f} s", rep.precond,
               rep.smoother.empty() ? "" : ", " + rep.smoother + " smoother", rep.ranks, rep.backend,
               rep.result.iterations, rep.result.relative_residual, rep.time.solve);
  if (!rep.result.converged) {  // the same verdict on every rank: the iteration's scalars are global
    rep.time.total = total.lap();
    gather_ranks();
    if (mpi.is_root() && !opt.json.empty()) write_json(opt.json, rep);
    throw SolveError(fmt::format("pcg did not converge: relative residual {:.3e} after {} iterations, tolerance {:.1e} "
                                 "(raise --max-iter or try another --precond); no voltages written",
                                 rep.result.relative_residual, rep.result.iterations, opt.tolerance));
  }

  std::vector<double>& voltages = keep.voltages;
  try {
    voltages = dist::owned_voltages(sys, solved.x, MPI_COMM_WORLD);
  } catch (const std::exception& e) {
    end_job(mpi, "the recovery of the voltages", e);
  }
  rep.time.recover = phase.lap() - rep.time.setup - rep.time.upload - rep.time.solve;
  // The rank's system and its block's solution are read no more: released before its node names
  // are restored, so that the voltages file's step does not hold both.
  sys = dist::RankSystem{};
  std::vector<double>().swap(solved.x);
  Stopwatch restoring;
  const size_t parked_bytes = owned_names.bytes.size();
  restore_names(owned_names, netlist.owned_names);
  dist::log_step(MPI_COMM_WORLD, fmt::format("rank {}: owned node names parked in {:.3f} s ({:.1f} MB from {:.1f} MB), "
                                             "restored in {:.3f} s",
                                             mpi.rank(), park_seconds, double(parked_bytes) / 1e6,
                                             double(netlist.owned_names.arena_bytes() + 8 * (uint64_t(netlist.owned()) + 1)) / 1e6,
                                             restoring.lap()));
  if (!opt.output.empty()) write_voltages_distributed(opt.output, netlist, voltages, MPI_COMM_WORLD);
  spdlog::info("the IR-drop summary is computed in one process only (it is not part of a distributed run)");
  rep.time.write = phase.lap();
  rep.time.total = total.lap();
  gather_ranks();  // per_rank's peaks include the recovery and the voltages file
  rep.peak_host_bytes = host_memory().peak;
  if (mpi.is_root() && !opt.json.empty()) write_json(opt.json, rep);
  return rep;
}

}  // namespace pgsim
