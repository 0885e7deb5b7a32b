#pragma once
// In-place inclusive prefix sum of counts (row offsets from row lengths), in parallel for long
// arrays; integer sums, so the result does not depend on the thread count.
#include <cstddef>
#include <cstdint>

namespace pgsim {

// a[i] = a[0] + ... + a[i] for i < n.
void prefix_sum(int32_t* a, size_t n);

// The same over a whole array of int32_t: a std::vector, or a FillVector (parser/default_init.hpp)
// filled on all threads.
template <class Array>
void prefix_sum(Array& a) {
  prefix_sum(a.data(), a.size());
}

}  // namespace pgsim
