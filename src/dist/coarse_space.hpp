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
//
// A long cut (many rows at it: 330k per rank on the 50M-node grid at 4 ranks) would make a
// coarse system too large to hold (a GPU keeps rows of its dense inverse) or to factor on every
// rank. Then the rows near the cut are grouped instead, one coarse unknown per vertex of a
// CMG level (the clusters CMG built: connected, a few rows each on level 1, more on each
// level above), the finest level that keeps all ranks' unknowns within the bound
// (build_bounded_coarse_space, coarse_problem.hpp: collective).
#include <cstdint>
#include <functional>
#include <vector>

#include "cmg/hierarchy.hpp"
#include "dist/partition.hpp"

namespace pgsim::dist {

struct CoarseSpace {
  std::vector<int32_t> unknown_of_row;  // per local row: its coarse unknown in [0, count), or -1 (none)
  int32_t count = 0;                    // this rank's coarse unknowns, numbered in order of first row
};

// The most coarse unknowns over all ranks (the GPU path holds up to this many columns of E^{-1}
// per row it keeps: 8 * 16384 bytes each).
inline constexpr int64_t kMaxCoarseUnknowns = 16384;

// `h`: the CMG hierarchy of block.interior (same rows). Requires layers >= 0. The rows near
// the cut are grouped by their vertex on level `group_level` of h (0: each row alone; clamped
// to h's coarsest level).
CoarseSpace build_coarse_space(const RankBlock& block, const CmgHierarchy& h, int layers, int group_level = 0);

// Per level l of h: this rank's coarse unknowns with group_level l.
std::vector<int64_t> coarse_counts_by_level(const RankBlock& block, const CmgHierarchy& h, int layers);

// build_coarse_space at the group_level choose(coarse_counts_by_level(...)) returns, the rows'
// vertices found once for both.
CoarseSpace build_coarse_space_at(const RankBlock& block, const CmgHierarchy& h, int layers,
                                  const std::function<int(const std::vector<int64_t>&)>& choose);

}  // namespace pgsim::dist
