#include "csr.hpp"

#include <algorithm>
#include <cstddef>
#include <tuple>
#include <utility>

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


void sort_row(int32_t* col, double* val, int32_t len) {
  if (len > 32) {
    std::vector<std::pair<int32_t, double>> entries(static_cast<size_t>(len));
    for (int32_t i = 0; i < len; ++i) entries[i] = {col[i], val[i]};
    std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (int32_t i = 0; i < len; ++i) std::tie(col[i], val[i]) = entries[i];
    return;
  }
  for (int32_t i = 1; i < len; ++i) {
    const int32_t c = col[i];
    const double v = val[i];
    int32_t j = i;
    for (; j > 0 && col[j - 1] > c; --j) {
      col[j] = col[j - 1];
      val[j] = val[j - 1];
    }
    col[j] = c;
    val[j] = v;
  }
}

}  // namespace pgsim
