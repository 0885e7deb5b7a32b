#include "tran/integrate.hpp"

#include <algorithm>
#include <cmath>

#include "mna/stopwatch.hpp"

namespace pgsim {

int64_t step_count(double tstop, double h) {
  return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(tstop / h * (1 - 1e-9))));
}

IntegrationStats integrate(Stepper& stepper, double h, int64_t steps, const StepObserver& observe) {
  IntegrationStats stats;
  Stopwatch clock;
  observe(0, 0.0, stepper.probed());
  for (int64_t n = 1; n <= steps; ++n) {
    const double t = static_cast<double>(n) * h;
    const SolveResult r = stepper.advance(t);
    stats.steps = n;
    stats.iterations += r.iterations;
    stats.max_iterations = std::max(stats.max_iterations, r.iterations);
    stats.worst_residual = std::max(stats.worst_residual, r.relative_residual);
    if (!r.converged) {
      stats.converged = false;
      break;
    }
    observe(n, t, stepper.probed());
  }
  stats.seconds = clock.lap();
  return stats;
}

}  // namespace pgsim
