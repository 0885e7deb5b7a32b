#pragma once
// Stable counting sort of items by an integer key, in parallel, with one result for any thread
// count (a stable sort's result is unique): the cluster members of galerkin_coarse and the
// renumbering of the builder.
#include <cstdint>
#include <vector>

namespace pgsim {

// key[i] in [0, keys) for i in [0, key.size()). key_ptr[k]: where key k's items start (size
// keys + 1); rank[i]: item i's place in the sorted order (equal keys in increasing i).
void counting_sort(const std::vector<int32_t>& key, int32_t keys, std::vector<int32_t>& key_ptr,
                   std::vector<int32_t>& rank);

}  // namespace pgsim
