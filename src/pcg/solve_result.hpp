#pragma once
// What every solver back end reports, and how it is told when to stop.
#include <functional>
#include <string>

namespace pgsim {

struct SolveControl {
  double tolerance = 1e-10;   // relative residual ||b - Ax|| / ||b||
  int max_iterations = 2000;
  // Called after each iteration with (iteration, relative residual estimate); may be empty.
  std::function<void(int, double)> progress;
};

struct SolveResult {
  int iterations = 0;
  double relative_residual = 0;  // true residual ||b - A x|| / ||b|| of the returned x
  bool converged = false;
};

}  // namespace pgsim
