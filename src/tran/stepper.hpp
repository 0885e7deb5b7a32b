#pragma once
// The engine of a transient time loop (tran/step_system.hpp). It owns the state between steps
// and gives back only what a run reports: a few probed nodes' voltages after every step (the
// .print waveforms) and, at the end, each unknown's lowest and highest value over the run. The
// worst dynamic drop or bounce of every node follows from those two (app/ir_drop.hpp's deviation
// is monotone in the voltage), so a GPU stepper keeps the whole state on the device and returns
// a handful of numbers per step.
#include <cstdint>
#include <vector>

#include "mna/reduce.hpp"
#include "pcg/preconditioner.hpp"
#include "pcg/solve_result.hpp"
#include "tran/source_changes.hpp"
#include "tran/step_solver.hpp"
#include "tran/step_system.hpp"

namespace pgsim {

// A probed node: its voltage is offset + x[unknown] (offset alone when unknown is -1), where a
// node whose offset moves (moving >= 0, an index into StepSystem::moving) takes that offset now.
struct Probe {
  int32_t unknown = -1;
  double offset = 0;
  int32_t moving = -1;
};

// The probes of netlist nodes `nodes` in the step system's unknowns.
std::vector<Probe> probes_of(const StepSystem& system, const std::vector<uint32_t>& nodes);

class Stepper {
 public:
  virtual ~Stepper() = default;
  // One step to time t = t_{n+1}: the right-hand side, the solve, the history currents. An
  // iterative solve starts from 2 x_n - x_{n-1} (x0 at the first step): the grid's voltages move
  // smoothly from step to step, so this guess's error is the change's change: ibmpg1t's GPU steps
  // take 11.0 iterations instead of 17.0 from x_n at --tol 1e-10, 5.3 instead of 10.5 at 1e-8
  // (H100 machine, README "Transient analysis"). On a solve that does not converge the state is
  // that step's last iterate.
  virtual SolveResult advance(double t) = 0;
  // The probed nodes' voltages in the state now, in the order the stepper was given them.
  virtual const std::vector<double>& probed() = 0;
  // Per step unknown, its smallest and largest value over every state so far, t = 0 included.
  virtual void unknown_range(std::vector<double>& lo, std::vector<double>& hi) = 0;
  // Per moving node (StepSystem::moving), its lowest and highest voltage over every state so far.
  // Only the CPU engine takes voltage sources with a waveform, so only it has moving nodes.
  virtual void moving_range(std::vector<double>& lo, std::vector<double>& hi) { lo.clear(), hi.clear(); }
  virtual std::vector<LevelStats> levels() const { return {}; }
};

// The CPU engine: step_rhs, a StepSolver, advance_history, all on the host. `system` and
// `solver` must outlive it; x0: the step unknowns at t = 0 (start_from_dc).
class CpuStepper : public Stepper {
 public:
  CpuStepper(StepSystem& system, StepSolver& solver, std::vector<double> x0, std::vector<Probe> probes);
  SolveResult advance(double t) override;
  const std::vector<double>& probed() override;
  void unknown_range(std::vector<double>& lo, std::vector<double>& hi) override;
  void moving_range(std::vector<double>& lo, std::vector<double>& hi) override;
  std::vector<LevelStats> levels() const override { return solver_.levels(); }

 private:
  StepSystem& system_;
  StepSolver& solver_;
  SourceChanges sources_;
  double moving_voltage(size_t m) const;  // of StepSystem::moving[m] in the state now

  std::vector<double> x_, x_previous_, b_, changes_, voltage_changes_, lo_, hi_, probed_, moving_lo_, moving_hi_;
  std::vector<Probe> probes_;
};

}  // namespace pgsim
