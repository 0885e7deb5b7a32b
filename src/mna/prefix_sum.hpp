#pragma once
// In-place inclusive prefix sum of counts (row offsets from row lengths), in parallel for long
// arrays; integer sums, so the result does not depend on the thread count.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace pgsim {

// a[i] = a[0] + ... + a[i] for i in [0, n).
void prefix_sum(int32_t* a, size_t n);

// The same on a whole std::vector or FillVector.
template <class Allocator>
void prefix_sum(std::vector<int32_t, Allocator>& a) {
  prefix_sum(a.data(), a.size());
}

}  // namespace pgsim
