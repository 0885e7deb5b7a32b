#pragma once
// A preconditioner for the CPU PCG: z = B r with B fixed, symmetric and positive definite.
#include <cstdint>
#include <string>
#include <vector>

namespace pgsim {

// One level of a multilevel preconditioner, for --profile and the JSON report.
struct LevelStats {
  int64_t rows = 0;
  int64_t nnz = 0;
  int repeats = 1;      // t_l: how often this level's cycle calls the next one
  double visits = 1;    // times this level is visited per preconditioner application
  double seconds = 0;   // time spent on this level during the solve
};

class Preconditioner {
 public:
  virtual ~Preconditioner() = default;
  virtual void apply(const double* r, double* z) const = 0;
  virtual std::string name() const = 0;
  // Per-level figures; empty for single-level preconditioners.
  virtual std::vector<LevelStats> levels() const { return {}; }
};

}  // namespace pgsim
