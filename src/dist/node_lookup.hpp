#pragma once
// SuperNodes' node lookups (dist/super_nodes.hpp: unknown_of, offset_of) as plain arrays, for the
// stamp on a rank's GPU (gpu/device_stamp.hpp), which copies them there and looks nodes up as
// SuperNodes does. Plain C++, no MPI.
#include <cstddef>
#include <cstdint>

namespace pgsim::dist {

// A NodeSubset (dist/node_subset.hpp) as its arrays: the bitmap over nodes [base, ...) and each
// word's members below it (words + 1 entries).
struct SubsetArrays {
  uint32_t base = 0;
  const uint64_t* words = nullptr;
  const uint32_t* ranks = nullptr;
  size_t word_count = 0;
};

struct NodeLookup {
  uint32_t range_first = 1, range_count = 0;  // the rank's own nodes
  const int32_t* range_unknown = nullptr;     // range_count: each own node's unknown (-1: fixed)
  SubsetArrays has_offset;                    // own nodes of a nonzero offset, ...
  const double* range_offset = nullptr;       // ... their offsets in node order
  size_t range_offsets = 0;
  SubsetArrays foreign;                       // other ranks' nodes the rank's elements stamp, ...
  const int32_t* foreign_unknown = nullptr;   // ... their unknowns and offsets in node order
  const double* foreign_offset = nullptr;
  size_t foreign_count = 0;
  bool offsets_zero = true;                   // SuperNodes::offsets_zero()
};

}  // namespace pgsim::dist
