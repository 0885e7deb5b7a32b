#pragma once
// The time loop of a transient analysis (tran/step_system.hpp): from the state at t = 0, fixed
// steps of h to t_N = N h, one solve per step.
#include <cstdint>
#include <functional>
#include <vector>

#include "tran/step_solver.hpp"
#include "tran/step_system.hpp"

namespace pgsim {

struct IntegrationStats {
  int64_t steps = 0;
  int64_t iterations = 0;  // summed over the steps (0 for a direct solver)
  int max_iterations = 0;  // of one step
  double seconds = 0;      // the loop, observer included
  bool converged = true;   // every step reached the solver's tolerance
  double worst_residual = 0;
};

// Called for n = 0 .. N with t_n and the step unknowns x_n (the DC operating point at n = 0).
using StepObserver = std::function<void(int64_t n, double t, const std::vector<double>& x)>;

// Number of steps of h to reach tstop: N = ceil(tstop / h), less a relative 1e-9 of slack so
// that 1e-8 / 1e-11 is 1000 steps and not 1001.
int64_t step_count(double tstop, double h);

// Runs N steps from x (x0 on entry, x_N on return). Stops early, with converged = false, at the
// first step whose solve does not converge.
IntegrationStats integrate(StepSystem& system, StepSolver& solver, std::vector<double>& x, int64_t steps,
                           const StepObserver& observe);

}  // namespace pgsim
