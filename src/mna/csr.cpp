#include "csr.hpp"

#include <cstddef>

namespace pgsim {

void CsrMatrix::multiply(const double* x, double* y) const {
#pragma omp parallel for schedule(static, 4096)
  for (int32_t i = 0; i < rows; ++i) {
    double s = 0;
    for (int32_t k = ptr[i]; k < ptr[i + 1]; ++k) s += val[k] * x[col[k]];
    y[i] = s;
  }
}

std::vector<double> CsrMatrix::diagonal() const {
  std::vector<double> d(static_cast<size_t>(rows), 0.0);
  for (int32_t i = 0; i < rows; ++i)
    for (int32_t k = ptr[i]; k < ptr[i + 1]; ++k)
      if (col[k] == i) d[i] = val[k];
  return d;
}

}  // namespace pgsim
