#pragma once
// Construction of the CMG hierarchy for an SDD M-matrix (DESIGN.md section 3).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cmg/clustering.hpp"
#include "cmg/hierarchy.hpp"

namespace pgsim {

// A level's coarsening: its clustering and the next level, cluster_of's numbering (unrenumbered).
struct LevelCoarsening {
  Clustering clustering;
  CsrMatrix coarse;
};

struct CmgOptions {
  // A level with at most this many vertices is the coarsest: factored directly.
  int32_t coarse_rows = 2000;
  // Coarsening has stalled when a level keeps more than this share of its vertices; the level
  // reached is then factored directly (slower, still exact), and a warning says so.
  double stall_ratio = 0.75;
  int max_levels = 40;
  // A level whose next level has at most this many vertices visits it once (t_l = 1, a V-cycle
  // at the bottom of the hierarchy); above, t_l = max(floor(nnz_l / nnz_{l+1} - 1), 1). The
  // W-cycle multiplies visits by ~3 per level, and a small level's visit costs a few dependent
  // GPU kernels whatever its size, so repeating there costs more time than it saves iterations
  // (benchmarks/gpu/README.md, 5M-node grid on an H100: 2000 keeps the W-cycle's 21 iterations
  // and cuts the solve from 52.6 to 37.5 ms; 8000 gives 31.4 ms but 25 iterations, and up to
  // 46 on smaller grids, so 2000 is the default). 0: the W-cycle formula on every level.
  int32_t v_cycle_rows = 2000;
  // Also t_l = 1 where the next level has at most 1/v_cycle_ratio of level 0's vertices (0: no
  // such cap). Such a level carries only the smoothest error; its repeats bought no iterations
  // on the 5.03M-unknown grid (benchmarks/gpu/README.md, H100: 22 iterations with and without
  // the repeats of its 10.5k-row level, whose child has 2596 rows, 1/1099 of level 0; 46.9 vs 34.7 ms),
  // while the repeats of levels whose child holds 1/273 (5M-node grid) or 1/67 (1M-node grid) of
  // level 0 save 4 iterations each. On grids under ~1M unknowns v_cycle_rows is the larger cap.
  int32_t v_cycle_ratio = 512;
  // The Jacobi cycle's repeats: at most max_repeats per level (0: no cap beyond the formula and
  // the two caps above), and on every level with t_l >= 2 weighted (hierarchy.hpp) as the
  // Chebyshev polynomial of [a, chebyshev_rho] in one repeat's error propagation: w_k =
  // 1 / (1 - m_k), m_k the polynomial's zeros, the best damping of [a, rho] by t_l repeats; a <= 0
  // is the child's lowest error eigenvalue (bounded from the coarsest level up), which keeps
  // the cycle positive definite for any rho in [0, 1). chebyshev_rho 0: every weight 1 (plain
  // repeats). The two together: the 5.03M-unknown grid (benchmarks/gpu/README.md, H100) goes
  // from repeats 1,3,2,3,1,1,1 (146 cycle kernels per application, 22 iterations, 34.7 ms) to
  // 1,2,2,2,1,1,1 (70 kernels, 21 iterations, 25.2 ms); capped without weights, 28 iterations.
  // The Gauss-Seidel cycle (smoother sgs) keeps the formula's repeats and no weights.
  int max_repeats = 2;
  double chebyshev_rho = 0.7;
  // The cycle's smoother (hierarchy.hpp); sgs also colours every level but the coarsest.
  CmgSmoother smoother = CmgSmoother::jacobi;
  // When set, level 0's coarsening comes from it (the device's, gpu/cmg_coarsen.hpp) instead of
  // cluster_vertices and galerkin_coarse on the host: called with the builder's G, it must
  // return theirs bit for bit (cluster_vertices(grounded_sdd(G)) and galerkin_coarse(
  // grounded_sdd(G), ...)), so the hierarchy is the same either way. Called once, only if level 0
  // is not the coarsest.
  std::function<LevelCoarsening(const CsrMatrix& G)> coarsen_level0;
};

// Wall time of each construction phase in seconds (benchmarks/cmg/bench_cmg --phases, --verbose).
struct CmgBuildTimes {
  struct Level {
    double clustering = 0;  // cluster_vertices on this level
    double galerkin = 0;    // the next level from this one's clusters
    double renumber = 0;    // cluster keys in the final numbering, sorted: new_of_old, cluster_ptr
    double permute = 0;     // into the final numbering: permute_symmetric (level 0: sdd_to_laplacian of G)
    double inv_diag = 0;    // 1 / (2 A_ii) from the diagonal taken while permuting
  };
  double laplacian = 0;      // grounded_sdd: level 0's excesses and ground row, read from G
  std::vector<Level> levels;
  double coarse_factor = 0;  // factor_coarsest
  double coloring = 0;       // use_gauss_seidel (CmgSmoother::sgs only)
  double total = 0;
};

// A level's size, for cycle_of_levels.
struct LevelSize {
  int32_t rows = 0;
  int64_t nnz = 0;
};
// A level's cycle (CmgLevel::repeats and weights).
struct LevelCycle {
  int repeats = 1;
  std::vector<double> weights;
};
// Every level's cycle from the levels' sizes (level 0 first, the coarsest last, whose entry is
// {1, none}), as build_cmg_hierarchy sets them; shared with the device's build of the hierarchy
// (gpu/cmg_build.hpp). Throws std::invalid_argument for a chebyshev_rho outside [0, 1).
std::vector<LevelCycle> cycle_of_levels(const std::vector<LevelSize>& sizes, const CmgOptions& options);

// Whether coarsening `level` (of `rows` vertices) into `clusters` has stalled (CmgOptions::
// stall_ratio): then the level is the coarsest, and a warning says so.
bool coarsening_stalled(size_t level, int32_t rows, int32_t clusters, const CmgOptions& options);

// "jacobi" and "sgs", the default first; parse_cmg_smoother throws std::invalid_argument for
// any other name.
std::vector<std::string> cmg_smoother_names();
CmgSmoother parse_cmg_smoother(const std::string& name);
std::string cmg_smoother_name(CmgSmoother smoother);

// G: symmetric, non-positive off-diagonals, G_ii >= sum_j |G_ij|, every connected component
// holding a row with a positive excess (nonsingular). Throws std::runtime_error otherwise.
// The result does not depend on the number of OpenMP threads. times: filled when not null.
CmgHierarchy build_cmg_hierarchy(const CsrMatrix& G, const CmgOptions& options = {}, CmgBuildTimes* times = nullptr);

// Switches h to the Gauss-Seidel smoother: a greedy colouring of every level but the coarsest
// (CmgLevel::color_ptr, color_rows), and every level's weights cleared (that cycle has none). The
// levels themselves are left as they are.
void use_gauss_seidel(CmgHierarchy& h);

}  // namespace pgsim
