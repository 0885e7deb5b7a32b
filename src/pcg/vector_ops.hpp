#pragma once
// The few dense vector kernels the CPU solvers need, threaded with OpenMP.
#include <vector>

namespace pgsim {

inline double dot(const std::vector<double>& a, const std::vector<double>& b) {
  const auto n = static_cast<int64_t>(a.size());
  double s = 0;
#pragma omp parallel for reduction(+ : s) schedule(static)
  for (int64_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

// y += a x
inline void axpy(double a, const std::vector<double>& x, std::vector<double>& y) {
  const auto n = static_cast<int64_t>(x.size());
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
}

// y = x + a y
inline void xpay(const std::vector<double>& x, double a, std::vector<double>& y) {
  const auto n = static_cast<int64_t>(x.size());
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] + a * y[i];
}

}  // namespace pgsim
