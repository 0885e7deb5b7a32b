#include "gpu/coarse_inverse.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace pgsim::gpu {

std::vector<double> dense_coarse_inverse(const CoarseFactor& f, int32_t n) {
  if (n > kMaxDenseCoarse)
    throw std::invalid_argument("coarsest CMG level has " + std::to_string(n) + " vertices, more than the " +
                                std::to_string(kMaxDenseCoarse) + " the dense coarse solve accepts");
  const int32_t m = f.L.rows;
  if (m + 1 != n && !(n == 1 && m == 0))
    throw std::invalid_argument("coarse factor has " + std::to_string(m) + " rows for a level of " +
                                std::to_string(n) + " vertices");
  std::vector<double> inv(size_t(n) * size_t(n), 0.0);
  // Column j of (L L^T)^-1: forward solve L y = e_j (y_i = 0 for i < j), back solve L^T w = y.
#pragma omp parallel
  {
    std::vector<double> w(static_cast<size_t>(m), 0.0);
#pragma omp for schedule(dynamic, 16)
    for (int32_t j = 0; j < m; ++j) {
      std::fill(w.begin(), w.end(), 0.0);
      for (int32_t i = j; i < m; ++i) {
        double s = i == j ? 1.0 : 0.0;
        const int32_t last = f.L.ptr[i + 1] - 1;  // the diagonal
        for (int32_t k = f.L.ptr[i]; k < last; ++k) s -= f.L.val[k] * w[f.L.col[k]];
        w[i] = s / f.L.val[last];
      }
      for (int32_t i = m - 1; i >= 0; --i) {
        const int32_t first = f.Lt.ptr[i];  // the diagonal
        double s = w[i];
        for (int32_t k = first + 1; k < f.Lt.ptr[i + 1]; ++k) s -= f.Lt.val[k] * w[f.Lt.col[k]];
        w[i] = s / f.Lt.val[first];
      }
      const size_t cj = size_t(f.vertex[j]);
      for (int32_t i = 0; i < m; ++i) inv[size_t(f.vertex[i]) * size_t(n) + cj] = w[i];
    }
  }
  return inv;
}

}  // namespace pgsim::gpu
