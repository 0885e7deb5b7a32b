#include "pcg/jacobi.hpp"

#include <algorithm>

namespace pgsim {

JacobiPreconditioner::JacobiPreconditioner(const CsrMatrix& A) : inv_diag_(A.diagonal()) {
  for (double& d : inv_diag_) d = 1.0 / d;  // reduce() guarantees a positive diagonal
}

void JacobiPreconditioner::apply(const double* r, double* z) const {
  const auto n = static_cast<int64_t>(inv_diag_.size());
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) z[i] = inv_diag_[i] * r[i];
}

void IdentityPreconditioner::apply(const double* r, double* z) const { std::copy(r, r + n_, z); }

}  // namespace pgsim
