// pgsim: DC analysis of a power-grid netlist.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <omp.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <new>
#include <optional>

#include "app/backend.hpp"
#ifdef PGSIM_HAVE_MPI
#include "app/distributed_run.hpp"
#endif
#include "app/exit_codes.hpp"
#include "app/report.hpp"
#include "app/run.hpp"
#include "app/solve_error.hpp"
#include "app/system_error.hpp"
#include "app/version.hpp"
#include "cmg/builder.hpp"
#include "dist/mpi_session.hpp"
#include "parser/input_error.hpp"
#include "pcg/preconditioner_factory.hpp"

namespace {

// The whole pipeline, in one process or on every rank of an MPI job; its exit code. In a job,
// rank 0 reports: the other ranks' errors are the same (app/distributed_run.hpp), or were
// logged where they happened before the job was ended.
int run_pipeline(const pgsim::Options& opt, const pgsim::dist::MpiSession& mpi,
                 [[maybe_unused]] const pgsim::GpuContextWarmUp* early) {
  using namespace pgsim;
  const auto error = [&mpi](const std::string& text) {
    if (mpi.is_root()) spdlog::error("{}", text);
  };
  try {
    // The run's largest data outlives it, never freed: the process ends right after, and the
    // kernel reclaims the memory at exit in one pass, where freeing it block by block (with the
    // OpenMP threads alive) took 45 of the 110-190 ms from the run's end to the process's on a
    // 2M-node grid on the development VM (mostly the node-name table). Reachable from this
    // static, so leak checkers do not report it.
    static RunData* const kept = new RunData;
#ifdef PGSIM_HAVE_MPI
    static DistributedRunData* const rank_kept = new DistributedRunData;  // a rank's, likewise
    RunReport report = mpi.size() > 1 ? run_distributed(opt, mpi, rank_kept, early) : run(opt, kept);
    if (!mpi.is_root()) return kExitOk;
#else
    RunReport report = run(opt, kept);
#endif
    // With -o - or --json -, standard output holds that file alone; the tables go to stderr.
    std::ostream& text = opt.output == "-" || opt.json == "-" ? std::cerr : std::cout;
    if (report.ir_drop && !opt.quiet) {
      if (report.transient) text << "worst dynamic drop and bounce over the transient run:\n";
      text << ir_drop_text(*report.ir_drop);
    }
    if (report.comparison) text << comparison_text(*report.comparison);
    if (report.transient && report.transient->comparison)
      text << waveform_comparison_text(*report.transient->comparison);
    if (opt.profile) text << profile_table(report);
    text.flush();
    if (!std::cout) throw SystemError("cannot write to standard output");
    return kExitOk;
  } catch (const InputError& e) {
    error(e.what());
    return kExitInput;
  } catch (const SolveError& e) {
    error(e.what());
    return kExitNotConverged;
  } catch (const SystemError& e) {
    error(e.what());
    return kExitSystem;
  } catch (const std::bad_alloc&) {
    error("out of host memory");
    return kExitSystem;
  } catch (const std::exception& e) {
    error(std::string("internal error: ") + e.what());
    return kExitSystem;
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace pgsim;
  // Before any CUDA call (the warm-up below begins the context): one hardware work queue per GPU
  // instead of CUDA's default of eight, which makes the context quicker to create (README,
  // "Choosing the back end"; it is most of a mid-size GPU run's start). One queue takes work in
  // the order it is issued, so a stream's wait also holds back what other streams issue after it;
  // pgsim's one overlap that matters, the halo exchange's NCCL kernel beside the interior product
  // (gpu/halo_spmv.cu), is issued just before that product, with no wait between them. A user's
  // own setting stands.
  ::setenv("CUDA_DEVICE_MAX_CONNECTIONS", "1", 0);
  // Before any thread too: one host's ranks talk through shared memory unless the user chose otherwise.
  dist::prefer_shared_memory_transports();
  // A process that no launcher started solves on device 0 (an MPI rank picks its own): the CUDA
  // driver then opens that device alone, not every GPU of the host (session 22's probe on the
  // 2-GPU machine: cuInit 0.23-0.43 s with both H200 visible, 0.12-0.14 s with one; the context
  // after it 0.11-0.13 s either way). A user's own CUDA_VISIBLE_DEVICES stands.
  if (dist::launcher_size() == 0) ::setenv("CUDA_VISIBLE_DEVICES", "0", 0);
  // The logger first: a GPU warm-up begun below logs from its own thread (app/backend.hpp).
  auto logger = spdlog::stderr_color_mt("pgsim");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("%^%l%$: %v");
  Options opt;
  CLI::App app{"pgsim: DC voltages of a power-grid SPICE netlist (R, V, I; C open, L short)"};
  app.set_version_flag("--version", version_text, "print the version, commit, build type, CUDA and OpenMP and exit");
  app.add_option("netlist", opt.netlist, "SPICE netlist to solve")->required();
  auto* output = app.add_option("-o,--output", opt.output,
                                "write every node's voltage here, one 'name value' line per node ('-': standard output)");
  auto* compare = app.add_option("--compare", opt.compare, "reference voltages (IBM .solution layout) to compare with");
  app.add_option("--json", opt.json, "write a machine-readable summary of the run here ('-': standard output)");
  app.add_option("--heatmap", opt.heatmap, "write an IR-drop heat map per metal layer (<layer>.png) into this folder");
  auto* solver = app.add_option("--solver", opt.solver,
                                "pcg (iterative) or direct (sparse Cholesky, the accuracy reference; a small transient's "
                                "default under --backend auto)")
                      ->check(CLI::IsMember({"pcg", "direct"}))
                      ->capture_default_str();
  std::string precond_help = "PCG preconditioner:";
  for (const auto& name : cpu_preconditioner_names()) precond_help += " " + name;
  opt.precond = cpu_preconditioner_names().front();
  auto* precond = app.add_option("--precond", opt.precond, precond_help)
      ->check(CLI::IsMember(cpu_preconditioner_names()))
      ->capture_default_str();
  app.add_option("--backend", opt.backend, "where PCG runs: gpu, cpu, or auto (the GPU when one is usable; the CPU, with a warning, if it fails)")
      ->check(CLI::IsMember({"gpu", "cpu", "auto"}))
      ->capture_default_str();
  app.add_option("--parse", opt.parse,
                 "where the netlist is read: gpu (plain netlists; others on the CPU), cpu, or auto (the GPU for plain "
                 "files of 256 MB or more when the run may solve there)")
      ->check(CLI::IsMember({"gpu", "cpu", "auto"}))
      ->capture_default_str();
  app.add_option("--spmv", opt.spmv, "GPU SpMV layout of the system matrix: seg, csr or cusparse (default csr)")
      ->check(CLI::IsMember({"seg", "csr", "cusparse"}));
  auto* trsv = app.add_option("--trsv", opt.trsv,
                 "GPU triangular solves of --precond ic0: colored (default: colour-ordered factor, one launch per "
                 "colour), syncfree, thread, levelset, cusparse, or auto")
      ->check(CLI::IsMember({"auto", "syncfree", "thread", "colored", "levelset", "cusparse"}));
  auto* smoother = app.add_option("--smoother", opt.smoother,
                 "smoother of --precond cmg: jacobi (damped Jacobi) or sgs (multicolour symmetric Gauss-Seidel)")
      ->check(CLI::IsMember(cmg_smoother_names()))
      ->capture_default_str();
  auto* coarse_layers = app.add_option("--coarse-layers", opt.coarse_layers,
                 "under mpirun with --precond cmg: the global coarse correction keeps the rows within N links of a "
                 "cut between ranks as coarse unknowns of their own (grouped by CMG aggregate where they would be "
                 "over 16384); -1: no coarse correction (block CMG only), as where no coupling crosses the ranks")
      ->check(CLI::Range(-1, 1000))
      ->capture_default_str();
  app.add_option("--tol", opt.tolerance, "stop when ||b - Gx|| <= tol ||b||")
      ->check(CLI::Range(1e-16, 1.0))
      ->capture_default_str();
  app.add_option("--max-iter", opt.max_iterations, "iteration limit; reaching it is an error")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  bool no_eliminate = false;
  app.add_flag("--no-eliminate", no_eliminate,
               "keep wire chains (degree-1 and degree-2 unknowns) in the PCG system instead of eliminating them exactly");
  auto* export_system = app.add_option("--export-system", opt.export_prefix,
                                       "after the reduction, write PREFIX.G.mtx, PREFIX.b.mtx and PREFIX.nodes.txt");
  app.add_flag("--export-only", opt.export_only, "stop after --export-system (no solve)")
      ->needs(export_system)
      ->excludes(output)
      ->excludes(compare);
  app.add_option("--threads", opt.threads,
                 "the most threads any phase uses; a small input uses fewer (default: all cores; under mpirun, a "
                 "rank's share of its host's cores)")
      ->check(CLI::Range(1, 4096));
  app.add_option("--method", opt.method, "transient integration: tr (trapezoidal) or be (backward Euler)")
      ->check(CLI::IsMember({"tr", "be"}))
      ->capture_default_str();
  app.add_option("--tstep", opt.tstep, "transient time step in seconds (default: the .tran line's TSTEP)")
      ->check(CLI::PositiveNumber);
  app.add_flag("--dc", opt.dc_only, "the DC operating point only, even when the netlist has .tran");
  app.add_flag("--profile", opt.profile, "print per-phase and per-level timing");
  bool verbose = false;
  app.add_flag("-v,--verbose", verbose, "more messages");
  app.add_flag("-q,--quiet", opt.quiet, "warnings and errors only");
  // The command line is read before MPI_Init, and a rank's GPU warm-up begun from it, so that
  // the device's context (0.6-0.7 s on the 2-GPU machine) is made while MPI_Init runs (0.25 s);
  // an error in it is reported once the ranks know which of them is rank 0.
  std::exception_ptr cli_error;
  try {
    app.parse(argc, argv);
    // Options of one preconditioner given with another would be silently ignored.
    if (smoother->count() > 0 && opt.precond != "cmg")
      throw CLI::ValidationError("--smoother", "applies to --precond cmg only, not " + opt.precond);
    if (coarse_layers->count() > 0 && opt.precond != "cmg")
      throw CLI::ValidationError("--coarse-layers", "applies to --precond cmg only, not " + opt.precond);
    if (trsv->count() > 0 && opt.precond != "ic0")
      throw CLI::ValidationError("--trsv", "applies to --precond ic0 only, not " + opt.precond);
    if (opt.output == "-" && opt.json == "-")
      throw CLI::ValidationError("-o - and --json -", "only one output can go to standard output");
  } catch (const CLI::ParseError&) {
    cli_error = std::current_exception();
  }
  std::optional<GpuContextWarmUp> rank_warm_up;  // its device: the launcher's word (dist/mpi_session.hpp)
  if (const int local_rank = dist::launched_local_rank(); !cli_error && opt.backend == "gpu" && local_rank >= 0)
    rank_warm_up.emplace(true, local_rank, true);
  dist::MpiSession mpi(&argc, &argv);
  if (cli_error) try {
      std::rethrow_exception(cli_error);
    } catch (const CLI::ParseError& e) {
      // Every rank parsed the same command line and stops here alike; rank 0 speaks for them.
      int code = mpi.is_root() ? app.exit(e) : e.get_exit_code();
      return code == 0 ? 0 : kExitInput;
    }

  opt.eliminate = !no_eliminate;
  opt.solver_given = solver->count() > 0 || precond->count() > 0;
  // A pipe or socket whose reader has gone is a write error (exit 4, named), not a silent death.
  std::signal(SIGPIPE, SIG_IGN);
  // Once, before any parallel region: every phase's OpenMP loops (and the parser's chunking,
  // which asks omp_get_max_threads()) follow it.
  if (opt.threads > 0) omp_set_num_threads(opt.threads);
  const bool quiet = opt.quiet || !mpi.is_root();  // rank 0 reports for the job; the others warn only
  spdlog::set_level(quiet ? spdlog::level::warn : verbose ? spdlog::level::debug : spdlog::level::info);
  if (!mpi.launch_error().empty()) {
    spdlog::error("{}", mpi.launch_error());
    return kExitInput;
  }
  const int code = run_pipeline(opt, mpi, rank_warm_up ? &*rank_warm_up : nullptr);
  // Every output is in place (written, closed, renamed) and the tables are printed: leave
  // without tearing down what the process holds (the CUDA runtime's context and device memory,
  // pinned buffers, the run's data), which the kernel and the driver reclaim anyway. What the
  // driver does as the process's device files close remains: on the H100 machine an ibmpg1t
  // run on the GPU still spends 0.13-0.17 s outside its pipeline (start and exit), one on the
  // CPU 0.04 s. Only what is buffered for the terminal remains to be flushed. A rank of an MPI
  // job finalizes MPI first (the launcher counts a rank that exits without it as failed); the
  // voltages file is complete by then (app/distributed_voltages.hpp: written collectively).
  std::cout.flush();
  spdlog::default_logger()->flush();
  std::fflush(nullptr);
  mpi.finalize();
  std::_Exit(code);
}
