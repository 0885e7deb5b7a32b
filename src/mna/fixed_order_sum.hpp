#pragma once
// A parallel sum of doubles whose rounding does not depend on the thread count (the CPU solve's
// dot products, the CMG cycle's ground row).
#include <algorithm>
#include <cstdint>
#include <vector>

namespace pgsim {

// term(0) + ... + term(n - 1) in parallel, rounded the same for any thread count (so a solve's
// iterates, and the voltages written, do not depend on it): fixed blocks are summed in order, each
// by one thread, then the blocks' sums in order.
template <class Term>
double fixed_order_sum(int64_t n, Term term) {
  constexpr int64_t kBlock = 8192;
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<double> partial(static_cast<size_t>(blocks), 0.0);
#pragma omp parallel for schedule(static) if (blocks > 1)
  for (int64_t k = 0; k < blocks; ++k) {
    double s = 0;
    for (int64_t i = k * kBlock; i < std::min(n, (k + 1) * kBlock); ++i) s += term(i);
    partial[static_cast<size_t>(k)] = s;
  }
  double s = 0;
  for (double p : partial) s += p;
  return s;
}

}  // namespace pgsim
