#pragma once
// In-place inclusive prefix sum of counts (row offsets from row lengths), in parallel for long
// arrays; integer sums, so the result does not depend on the thread count.
#include <cstdint>
#include <vector>

namespace pgsim {

// a[i] = a[0] + ... + a[i].
void prefix_sum(std::vector<int32_t>& a);

}  // namespace pgsim
