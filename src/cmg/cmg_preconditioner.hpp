#pragma once
// The CMG cycle on the CPU: a fixed symmetric positive definite preconditioner for PCG.
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
  std::string name() const override { return "cmg"; }
  // Rows, nnz, repeats and visits per application of every level, and the seconds spent in
  // each level (its own work, not its children's) over all applications so far.
  std::vector<LevelStats> levels() const override;
  const CmgHierarchy& hierarchy() const { return h_; }

 private:
  void cycle(size_t level) const;  // x_[level] = B_level b_[level]

  CmgHierarchy h_;
  mutable std::vector<std::vector<double>> b_, x_, w_;
  mutable std::vector<double> seconds_;
};

}  // namespace pgsim
