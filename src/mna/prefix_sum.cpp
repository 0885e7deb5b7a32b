#include "mna/prefix_sum.hpp"

#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <vector>

namespace pgsim {
namespace {

// Shorter arrays are summed by one thread: two passes over memory would cost more than they save.
constexpr size_t kParallelLength = size_t(1) << 18;

}  // namespace

void prefix_sum(int32_t* a, size_t n) {
  const size_t chunks = n < kParallelLength ? 1 : size_t(omp_get_max_threads());
  if (chunks == 1) {
    for (size_t i = 1; i < n; ++i) a[i] += a[i - 1];
    return;
  }
  // Each chunk's total, the totals' prefix, then each chunk scanned from its offset.
  std::vector<int32_t> offset(chunks + 1, 0);
  auto begin = [n, chunks](size_t c) { return n * c / chunks; };
  const std::ptrdiff_t schunks = std::ptrdiff_t(chunks);
#pragma omp parallel for schedule(static, 1)
  for (std::ptrdiff_t c = 0; c < schunks; ++c) {
    int32_t sum = 0;
    for (size_t i = begin(size_t(c)); i < begin(size_t(c) + 1); ++i) sum += a[i];
    offset[size_t(c) + 1] = sum;
  }
  for (size_t c = 0; c < chunks; ++c) offset[c + 1] += offset[c];
#pragma omp parallel for schedule(static, 1)
  for (std::ptrdiff_t c = 0; c < schunks; ++c) {
    int32_t sum = offset[size_t(c)];
    for (size_t i = begin(size_t(c)); i < begin(size_t(c) + 1); ++i) a[i] = sum += a[i];
  }
}

}  // namespace pgsim
