#include "app/transient_run.hpp"

#include <spdlog/spdlog.h>

#include <memory>

#include "app/backend.hpp"
#include "app/heatmap.hpp"
#include "app/ir_drop.hpp"
#include "app/solve_error.hpp"
#include "app/waveform_file.hpp"
#include "parser/input_error.hpp"
#include "pcg/direct.hpp"
#include "tran/integrate.hpp"
#include "tran/step_solver.hpp"
#include "tran/step_system.hpp"
#include "tran/stepper.hpp"

namespace pgsim {
namespace {

// The solver the command line asks for, for one fixed matrix (the DC system or the step matrix).
std::unique_ptr<StepSolver> make_solver(const CsrMatrix& A, const Options& opt, const std::string& precond,
                                        int threads) {
  if (opt.solver == "direct") return std::make_unique<DirectStepSolver>(A, opt.eliminate, threads);
  SolveControl control;
  control.tolerance = opt.tolerance;
  control.max_iterations = opt.max_iterations;
  return std::make_unique<PcgStepSolver>(A, precond, cmg_options(opt), opt.eliminate, control);
}

std::vector<uint32_t> printed_node_ids(const Netlist& nl) {
  std::vector<uint32_t> ids;
  for (const PrintedNode& p : nl.transient.printed) {
    const uint32_t id = nl.node_names.find(p.name);
    if (id >= nl.node_count())
      throw ParseError(nl.files[p.file], p.line, ".print: node '" + p.name + "' is not in the netlist");
    ids.push_back(id);
  }
  return ids;
}

}  // namespace

void run_transient(const Options& opt, Netlist& nl, RunReport& rep, Stopwatch& phase, int thread_cap) {
  const TranSpec spec = *nl.transient.tran;
  TransientReport tr;
  tr.method = opt.method;
  tr.tstep = opt.tstep > 0 ? opt.tstep : spec.tstep;
  tr.tstop = spec.tstop;
  const std::vector<uint32_t> printed = printed_node_ids(nl);
  nl.node_names.drop_index();  // the last lookup by name (waveforms are compared by their own names)
  tr.printed_nodes = static_cast<int64_t>(printed.size());
  if (!opt.output.empty() && printed.empty())
    throw InputError("-o: a transient run writes the .print tran v(...) nodes' waveforms, and " + nl.files[0] +
                     " has no .print tran line");
  std::vector<NodeWaveform> reference;
  if (!opt.compare.empty()) reference = read_waveforms(opt.compare);
  prepare_sources(nl, spec.tstep, spec.tstop);

  // The DC system (t = 0: C open, L short, every source at its t = 0 value) and the step system,
  // whose size picks the engine, the DC operating point's solver included.
  const ReducedSystem dc = reduce(nl);
  const Integration method = opt.method == "be" ? Integration::BackwardEuler : Integration::Trapezoidal;
  StepSystem step = build_step_system(nl, method, tr.tstep);
  rep.unknowns = step.reduced.unknowns();
  rep.nnz = step.reduced.G.nnz();
  rep.time.reduce = phase.lap();
  const int64_t steps = step_count(tr.tstop, tr.tstep);
  const BackendChoice choice =
      choose_transient_backend(opt, !step.voltages.empty(), rep.unknowns, steps, [&] { return factor_entries(step.reduced.G); });
  Options engine = opt;  // the command line with the chosen solver
  engine.solver = choice.solver;
  rep.method = engine.solver;
  rep.precond = engine.solver == "direct" ? direct_solver_name() : opt.precond.empty() ? "cmg" : opt.precond;
  if (rep.precond == "cmg") rep.smoother = opt.smoother;
  rep.backend = choice.backend;
  rep.backend_reason = choice.reason;
  if (opt.backend == "auto")
    spdlog::info("{}: the time loop runs on the {}{}", choice.reason, choice.backend,
                 engine.solver == "direct" ? " with the factorisation" : "");

  std::vector<double> x_dc(static_cast<size_t>(dc.unknowns()), 0.0);
  rep.result = make_solver(dc.G, engine, rep.precond, thread_cap)->solve(dc.b, x_dc);
  if (!rep.result.converged)
    throw SolveError(fmt::format("the DC operating point did not converge: relative residual {:.3e} after {} "
                                 "iterations (raise --max-iter or try another --precond)",
                                 rep.result.relative_residual, rep.result.iterations));
  const std::vector<double> dc_voltages = node_voltages(dc, x_dc);
  NodeDeviations worst = node_deviations(supply_nets(nl), dc, dc_voltages);
  rep.time.solve = phase.lap();

  // The step system's state at t = 0, its engine (factorisation or preconditioner built once, on
  // the CPU or the GPU), the loop.
  std::vector<double> x0;
  start_from_dc(step, nl, dc_voltages, x0);
  // The step system holds what the loop needs (branches, sources' waveforms): as in the DC run,
  // only the node names are needed from here on.
  release_elements(nl);
  rep.time.reduce += phase.lap();
  const std::vector<Probe> probes = probes_of(step, printed);
  SolveControl control;
  control.tolerance = opt.tolerance;
  control.max_iterations = opt.max_iterations;
  std::unique_ptr<StepSolver> cpu_solver;
  std::unique_ptr<Stepper> stepper;
  auto on_the_cpu = [&] {
    rep.backend = "cpu";
    rep.device.clear();
    rep.time.upload = 0;
    phase.lap();
    cpu_solver = make_solver(step.reduced.G, engine, rep.precond, thread_cap);
    stepper = std::make_unique<CpuStepper>(step, *cpu_solver, x0, probes);
    rep.time.setup += phase.lap();
  };
  if (rep.backend == "gpu") {
    stepper = make_gpu_stepper(step, x0, probes, control, opt, rep);
    phase.lap();
    if (!stepper) rep.backend_reason = "auto: the GPU failed while uploading (see the warning)";
  }
  if (!stepper) on_the_cpu();
  spdlog::info("transient: {} unknowns, {} steps of {:.4g} s ({}) on the {}", rep.unknowns, steps, tr.tstep,
               method == Integration::Trapezoidal ? "trapezoidal" : "backward Euler", rep.backend);

  std::vector<NodeWaveform> waves(printed.size());
  const double first_printed = spec.tstart - 1e-9 * tr.tstep;
  IntegrationStats stats;
  std::vector<double> lo, hi;  // each unknown's range over the run
  auto loop = [&] {
    for (size_t k = 0; k < printed.size(); ++k) waves[k] = NodeWaveform{nl.transient.printed[k].name, {}, {}};
    stats = integrate(*stepper, tr.tstep, steps, [&](int64_t, double t, const std::vector<double>& v) {
      if (t < first_printed) return;
      for (size_t k = 0; k < printed.size(); ++k) {
        waves[k].time.push_back(t);
        waves[k].value.push_back(v[k]);
      }
    });
    stepper->unknown_range(lo, hi);
  };
  if (rep.backend == "cpu") loop();
  else if (!run_gpu_loop(opt, loop)) {
    rep.backend_reason = "auto: the GPU failed during the time loop (see the warning)";
    on_the_cpu();
    loop();
  }
  // The worst drop or bounce over the run: deviation() is monotone in the voltage, so each node's
  // lowest and highest voltage give it.
  std::vector<double> moving_lo, moving_hi;  // nodes whose offset moves: their own range
  stepper->moving_range(moving_lo, moving_hi);
  auto voltages = [&](const std::vector<double>& x, const std::vector<double>& moving) {
    std::vector<double> v = node_voltages(step.reduced, x);
    for (size_t m = 0; m < moving.size(); ++m) v[step.moving[m].node] = moving[m];
    return v;
  };
  keep_worst(worst, voltages(lo, moving_lo));
  keep_worst(worst, voltages(hi, moving_hi));
  tr.steps = stats.steps;
  tr.total_iterations = stats.iterations;
  tr.max_iterations = stats.max_iterations;
  tr.seconds = stats.seconds;
  rep.levels = stepper->levels();
  rep.time.solve += phase.lap();
  spdlog::info("transient: {} steps in {:.3f} s ({:.3g} ms per step), {:.1f} iterations per step", tr.steps, tr.seconds,
               1e3 * tr.seconds_per_step(), tr.mean_iterations());
  if (!stats.converged)
    throw SolveError(fmt::format("step {} (t = {:.4e} s) did not converge: relative residual {:.3e} (raise --max-iter "
                                 "or try another --precond); no waveforms written",
                                 stats.steps, double(stats.steps) * tr.tstep, stats.worst_residual));

  if (!opt.output.empty()) write_waveforms(opt.output, waves);
  rep.ir_drop = summarize_ir_drop(nl, worst);
  if (!opt.heatmap.empty()) {
    const auto maps = write_heatmaps(opt.heatmap, nl, worst);
    if (maps.empty()) spdlog::warn("--heatmap: no supplied node is named n<layer>_<x>_<y>, so there is nothing to draw");
    for (const auto& path : maps) spdlog::info("wrote {}", path);
  }
  if (!reference.empty()) tr.comparison = compare_waveforms(waves, reference);
  rep.time.write = phase.lap();
  rep.transient = std::move(tr);
}

}  // namespace pgsim
