#include "pcg/pcg_cpu.hpp"

#include <cmath>

#include "mna/fixed_order_sum.hpp"
#include "pcg/vector_ops.hpp"

namespace pgsim {

// The fixed-order dot of vector_ops.hpp: the same bits for any thread count.
double CsrBackend::dot(const std::vector<double>& a, const std::vector<double>& b) const { return pgsim::dot(a, b); }

SolveResult pcg_cpu(const CsrMatrix& A, const std::vector<double>& b, std::vector<double>& x,
                    const Preconditioner& M, const SolveControl& control) {
  return pcg(CsrBackend(A), b, x, M, control);
}

// One pass over A with no temporary vectors: fresh vectors the size of b cost more in page
// faults than the pass itself (this runs once after every solve, on the whole system). Summed in
// a fixed order, so the residual the run reports (--json) does not depend on the thread count.
double relative_residual(const CsrMatrix& A, const std::vector<double>& b, const std::vector<double>& x) {
  const double bnorm = std::sqrt(dot(b, b));
  if (bnorm == 0) return 0.0;
  const double rr = fixed_order_sum(A.rows, [&](int64_t i) {
    double ri = b[size_t(i)];
    for (int32_t k = A.ptr[size_t(i)]; k < A.ptr[size_t(i) + 1]; ++k) ri -= A.val[size_t(k)] * x[size_t(A.col[size_t(k)])];
    return ri * ri;
  });
  return std::sqrt(rr) / bnorm;
}

}  // namespace pgsim
