#pragma once
// Incomplete Cholesky with zero fill, IC(0): G ~ L L^T with L on the pattern of tril(G).
// For an SDD M-matrix (every system reduce() produces) it exists and is positive definite.
#include <vector>

#include "mna/csr.hpp"
#include "pcg/preconditioner.hpp"

namespace pgsim {

struct Ic0Factor {
  CsrMatrix L;   // lower triangle, columns sorted, diagonal last in every row
  CsrMatrix Lt;  // L^T: upper triangle, diagonal first
};

// (L L^T)(i, j) = G(i, j) wherever G(i, j) is stored. G: symmetric, sorted columns, diagonal
// stored. Throws std::domain_error naming the row when a pivot is not positive (G not SPD
// enough for IC(0), which cannot happen for an SDD M-matrix).
Ic0Factor ic0_factor(const CsrMatrix& G);

// z = (L L^T)^{-1} r by two triangular substitutions on the CPU.
class Ic0Preconditioner : public Preconditioner {
 public:
  explicit Ic0Preconditioner(const CsrMatrix& G);
  void apply(const double* r, double* z) const override;
  std::string name() const override { return "ic0"; }

 private:
  Ic0Factor f_;
  mutable std::vector<double> y_;
};

}  // namespace pgsim
