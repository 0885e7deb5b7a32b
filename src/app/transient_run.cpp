#include "app/transient_run.hpp"

#include <spdlog/spdlog.h>

#include <memory>

#include "app/backend.hpp"
#include "app/heatmap.hpp"
#include "app/ir_drop.hpp"
#include "app/solve_error.hpp"
#include "app/waveform_file.hpp"
#include "parser/input_error.hpp"
#include "tran/integrate.hpp"
#include "tran/step_solver.hpp"
#include "tran/step_system.hpp"

namespace pgsim {
namespace {

// The solver the command line asks for, for one fixed matrix (the DC system or the step matrix).
std::unique_ptr<StepSolver> make_solver(const CsrMatrix& A, const Options& opt, const std::string& precond) {
  if (opt.solver == "direct") return std::make_unique<DirectStepSolver>(A);
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

void run_transient(const Options& opt, Netlist& nl, RunReport& rep, Stopwatch& phase) {
  const TranSpec spec = *nl.transient.tran;
  TransientReport tr;
  tr.method = opt.method;
  tr.tstep = opt.tstep > 0 ? opt.tstep : spec.tstep;
  tr.tstop = spec.tstop;
  const std::vector<uint32_t> printed = printed_node_ids(nl);
  tr.printed_nodes = static_cast<int64_t>(printed.size());
  if (!opt.output.empty() && printed.empty())
    throw InputError("-o: a transient run writes the .print tran v(...) nodes' waveforms, and " + nl.files[0] +
                     " has no .print tran line");
  std::vector<NodeWaveform> reference;
  if (!opt.compare.empty()) reference = read_waveforms(opt.compare);
  prepare_sources(nl, spec.tstep, spec.tstop);

  // t = 0: the DC operating point with every source at its t = 0 value.
  rep.method = opt.solver;
  rep.precond = opt.solver == "direct" ? direct_solver_name() : opt.precond.empty() ? "cmg" : opt.precond;
  if (rep.precond == "cmg") rep.smoother = opt.smoother;
  rep.backend = "cpu";
  if (opt.backend == "gpu") spdlog::warn("--backend gpu: the transient analysis runs on the CPU (no GPU path for it yet)");
  const ReducedSystem dc = reduce(nl);
  rep.time.reduce = phase.lap();
  std::vector<double> x_dc(static_cast<size_t>(dc.unknowns()), 0.0);
  rep.result = make_solver(dc.G, opt, rep.precond)->solve(dc.b, x_dc);
  if (!rep.result.converged)
    throw SolveError(fmt::format("the DC operating point did not converge: relative residual {:.3e} after {} "
                                 "iterations (raise --max-iter or try another --precond)",
                                 rep.result.relative_residual, rep.result.iterations));
  const std::vector<double> dc_voltages = node_voltages(dc, x_dc);
  NodeDeviations worst = node_deviations(supply_nets(nl), dc, dc_voltages);
  rep.time.solve = phase.lap();

  // The step system, its solver (factorisation or preconditioner built once), the loop.
  const Integration method = opt.method == "be" ? Integration::BackwardEuler : Integration::Trapezoidal;
  StepSystem step = build_step_system(nl, method, tr.tstep);
  std::vector<double> x;
  start_from_dc(step, nl, dc_voltages, x);
  // The step system holds what the loop needs (branches, sources' waveforms): as in the DC run,
  // only the node names are needed from here on.
  release_elements(nl);
  rep.unknowns = step.reduced.unknowns();
  rep.nnz = step.reduced.G.nnz();
  rep.time.reduce += phase.lap();
  auto solver = make_solver(step.reduced.G, opt, rep.precond);
  rep.time.setup = phase.lap();
  spdlog::info("transient: {} unknowns, {} steps of {:.4g} s ({})", rep.unknowns, step_count(tr.tstop, tr.tstep),
               tr.tstep, method == Integration::Trapezoidal ? "trapezoidal" : "backward Euler");

  std::vector<NodeWaveform> waves(printed.size());
  for (size_t k = 0; k < printed.size(); ++k) waves[k].name = nl.transient.printed[k].name;
  const double first_printed = spec.tstart - 1e-9 * tr.tstep;
  const IntegrationStats stats =
      integrate(step, *solver, x, step_count(tr.tstop, tr.tstep), [&](int64_t, double t, const std::vector<double>& xn) {
        const std::vector<double> v = node_voltages(step.reduced, xn);
        keep_worst(worst, v);
        if (t < first_printed) return;
        for (size_t k = 0; k < printed.size(); ++k) {
          waves[k].time.push_back(t);
          waves[k].value.push_back(v[printed[k]]);
        }
      });
  tr.steps = stats.steps;
  tr.total_iterations = stats.iterations;
  tr.max_iterations = stats.max_iterations;
  tr.seconds = stats.seconds;
  rep.levels = solver->levels();
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
