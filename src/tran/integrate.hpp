#pragma once
// The time loop of a transient analysis (tran/step_system.hpp): from the state at t = 0, fixed
// steps of h to t_N = N h, one Stepper::advance per step.
#include <cstdint>
#include <functional>
#include <vector>

#include "tran/stepper.hpp"

namespace pgsim {

struct IntegrationStats {
  int64_t steps = 0;
  int64_t iterations = 0;  // summed over the steps (0 for a direct solver)
  int max_iterations = 0;  // of one step
  double seconds = 0;      // the loop, observer included
  bool converged = true;   // every step reached the solver's tolerance
  double worst_residual = 0;
};

// Called for n = 0 .. N with t_n and the probed nodes' voltages (Stepper::probed) at t_n; n = 0 is
// the DC operating point.
using StepObserver = std::function<void(int64_t n, double t, const std::vector<double>& probed)>;

// Number of steps of h to reach tstop: N = ceil(tstop / h), less a relative 1e-9 of slack so
// that 1e-8 / 1e-11 is 1000 steps and not 1001.
int64_t step_count(double tstop, double h);

// Runs N steps of h from the stepper's state at t = 0. Stops early, with converged = false, at the
// first step whose solve does not converge.
IntegrationStats integrate(Stepper& stepper, double h, int64_t steps, const StepObserver& observe);

}  // namespace pgsim
