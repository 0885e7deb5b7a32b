#pragma once
// The CMG cycle on the CPU: a fixed symmetric positive definite preconditioner for PCG.
#include <chrono>
#include <vector>

#include "cmg/builder.hpp"
#include "cmg/hierarchy.hpp"
#include "pcg/preconditioner.hpp"

namespace pgsim {

class CmgPreconditioner : public Preconditioner {
 public:
  explicit CmgPreconditioner(CmgHierarchy hierarchy);
  CmgPreconditioner(const CsrMatrix& G, const CmgOptions& options);

  // z = B r, the cycle of hierarchy.hpp. Not thread-safe: it works in the object's buffers.
  void apply(const double* r, double* z) const override;
  std::string name() const override { return "cmg"; }  // the smoother: hierarchy().smoother
  // Rows, nnz, repeats and visits per application of every level, and the seconds spent in
  // each level (its own work, not its children's) over all applications so far.
  std::vector<LevelStats> levels() const override;
  const CmgHierarchy& hierarchy() const { return h_; }

 private:
  using Clock = std::chrono::steady_clock;

  void cycle(size_t level) const;  // x_[level] = B_level b_[level]
  // The non-coarsest level's cycle with either smoother; `start`: when the level's own time began.
  void jacobi_cycle(size_t level, Clock::time_point start) const;
  void sgs_cycle(size_t level, Clock::time_point start) const;
  // cycle(level + 1), its time kept out of this level's.
  void child_cycle(size_t level, Clock::time_point& start) const;
  void restrict_residual(size_t level) const;             // b_[level+1] = R^T (b - A x)
  void prolong(size_t level, double* out) const;          // out = x_[level] + R x_[level+1] (out may be x_)
  void gauss_seidel_color(size_t level, int32_t color) const;  // one colour of a sweep, in place

  CmgHierarchy h_;
  mutable std::vector<std::vector<double>> b_, x_, w_;
  mutable std::vector<double> seconds_;
};

}  // namespace pgsim
