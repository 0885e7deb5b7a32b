#pragma once
// Stable counting sort of items by an integer key, in parallel, with one result for any thread
// count (a stable sort's result is unique): the cluster members of galerkin_coarse and the
// renumbering of the builder.
#include <cstdint>
#include <vector>

#include "parser/default_init.hpp"

namespace pgsim {

// key[i] in [0, keys) for i in [0, key.size()). key_ptr[k]: where key k's items start (size
// keys + 1); rank[i]: item i's place in the sorted order (equal keys in increasing i).
// Defined for galerkin_coarse's types (a clustering's FillVector into FillVectors, scratch
// sized without a zero fill) and the builder's (its FillVector of keys into the hierarchy's
// std::vectors).
template <class Key, class Out>
void counting_sort(const Key& key, int32_t keys, Out& key_ptr, Out& rank);

}  // namespace pgsim
