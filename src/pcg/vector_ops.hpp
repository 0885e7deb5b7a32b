#pragma once
// The few dense vector kernels the CPU solvers need, threaded with OpenMP.
#include <cstdint>
#include <vector>

#include "mna/fixed_order_sum.hpp"

namespace pgsim {

inline double dot(const std::vector<double>& a, const std::vector<double>& b) {
  return fixed_order_sum(static_cast<int64_t>(a.size()), [&](int64_t i) { return a[i] * b[i]; });
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
