#pragma once
// The coarse space of the distributed preconditioner's global coarse correction
// (dist/two_level.hpp): which of a rank's rows form each of its coarse unknowns.
//
// Block CMG on each rank (block Jacobi across ranks) loses what CMG's coarse levels do across
// a cut, and near the cut it treats the other ranks' unknowns as grounded. The coarse space puts
// both back into one small global system: each coarse unknown is a set of one rank's rows (a
// column of the 0/1 matrix Z, no row in two sets), of two kinds:
//   - rows within `layers` links of the cut (a row with a coupling to another rank is at
//     distance 0; links inside the rank's own block), each alone: the error block Jacobi leaves
//     is largest there and varies from row to row;
//   - every other row: its aggregate on the coarsest level of the rank's own CMG hierarchy
//     (the clusters CMG already built), except the aggregate holding the hierarchy's ground
//     vertex, whose rows (tied to the pads) stay with the local solve alone.
// Measured in docs/distributed.md: without the cut rows the aggregates alone barely help, and
// each layer beyond them cuts iterations further at the price of a larger coarse system.
#include <cstdint>
#include <vector>

#include "cmg/hierarchy.hpp"
#include "dist/partition.hpp"

namespace pgsim::dist {

struct CoarseSpace {
  std::vector<int32_t> unknown_of_row;  // per local row: its coarse unknown in [0, count), or -1 (none)
  int32_t count = 0;                    // this rank's coarse unknowns, numbered in order of first row
};

// `h`: the CMG hierarchy of block.interior (same rows). Requires layers >= 0.
CoarseSpace build_coarse_space(const RankBlock& block, const CmgHierarchy& h, int layers);

}  // namespace pgsim::dist
