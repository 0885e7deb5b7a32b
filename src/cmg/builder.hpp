#pragma once
// Construction of the CMG hierarchy for an SDD M-matrix (DESIGN.md section 3).
#include <cstdint>

#include "cmg/hierarchy.hpp"

namespace pgsim {

struct CmgOptions {
  // A level with at most this many vertices is the coarsest: factored directly.
  int32_t coarse_rows = 2000;
  // Coarsening has stalled when a level keeps more than this share of its vertices; the level
  // reached is then factored directly (slower, still exact), and a warning says so.
  double stall_ratio = 0.75;
  int max_levels = 40;
};

// G: symmetric, non-positive off-diagonals, G_ii >= sum_j |G_ij|, every connected component
// holding a row with a positive excess (nonsingular). Throws std::runtime_error otherwise.
CmgHierarchy build_cmg_hierarchy(const CsrMatrix& G, const CmgOptions& options = {});

}  // namespace pgsim
