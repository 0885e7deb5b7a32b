#include "cmg/builder.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <utility>

#include "cmg/clustering.hpp"
#include "cmg/coarse_factor.hpp"
#include "cmg/counting_sort.hpp"
#include "cmg/galerkin.hpp"
#include "cmg/laplacian.hpp"
#include "mna/coloring.hpp"
#include "mna/stopwatch.hpp"
#include "parser/default_init.hpp"

namespace pgsim {
namespace {

// t_l = max(floor(nnz_l / nnz_{l+1} - 1), 1): more child cycles where the child is much cheaper.
int repeats(int64_t nnz_fine, int64_t nnz_coarse) {
  const double t = std::floor(double(nnz_fine) / double(nnz_coarse) - 1.0);
  return std::max(1, static_cast<int>(t));
}

// CmgOptions::v_cycle_rows and v_cycle_ratio: the parent of a level of child_rows visits it once.
bool v_cycle_below(const CmgOptions& options, int32_t level0_rows, int32_t child_rows) {
  return child_rows <= options.v_cycle_rows ||
         (options.v_cycle_ratio > 0 && int64_t(child_rows) * options.v_cycle_ratio <= level0_rows);
}

// CmgOptions::chebyshev_rho. One repeat's error propagation SK has its spectrum in [a, 1], a <= 0
// the lowest eigenvalue of the child's error propagation (0 below an exact solve), so the
// repeats are weighted as the Chebyshev polynomial of [a, rho]: w_k = 1 / (1 - m_k), m_k its
// zeros (a + rho) / 2 + (rho - a) / 2 cos((2k + 1) pi / (2t)). That p is below 1 on [a, 1) (at
// most 1 / T_t(x1) in magnitude on [a, rho], increasing to p(1) = 1 above), so the level's
// error propagation stays below 1: the cycle stays positive definite however far down the
// weighted levels reach.
std::vector<double> chebyshev_weights(int t, double a, double rho) {
  std::vector<double> w(static_cast<size_t>(t));
  const double pi = std::acos(-1.0);
  for (int k = 0; k < t; ++k)
    w[size_t(k)] = 1.0 / (1.0 - 0.5 * (a + rho) - 0.5 * (rho - a) * std::cos((2 * k + 1) * pi / (2.0 * t)));
  return w;
}

// The lowest eigenvalue (a bound, <= 0) of a level's error propagation p(SK) S, SK in [a, 1],
// S in [0, 1]: -1 / T_t(x1), x1 = (2 - a - rho) / (rho - a), with Chebyshev weights (p
// equioscillates on [a, rho]); min(0, a^t) with every weight 1 (p(m) = m^t).
double lowest_error_eigenvalue(const LevelCycle& level, double a, double rho) {
  const int t = level.repeats;
  if (level.weights.empty()) return t % 2 == 1 ? std::min(0.0, std::pow(a, t)) : 0.0;
  return -1.0 / std::cosh(t * std::acosh((2 - a - rho) / (rho - a)));
}

void check_chebyshev_rho(const CmgOptions& options) {
  if (!(options.chebyshev_rho >= 0 && options.chebyshev_rho < 1))
    throw std::invalid_argument("CMG chebyshev_rho must be in [0, 1)");
}

void log_times(const CmgBuildTimes& t) {
  spdlog::debug("cmg build {:.3f} s: laplacian {:.3f} s, coarse factor {:.3f} s, colouring {:.3f} s", t.total,
                t.laplacian, t.coarse_factor, t.coloring);
  for (size_t l = 0; l < t.levels.size(); ++l) {
    const CmgBuildTimes::Level& p = t.levels[l];
    spdlog::debug("cmg build level {}: clustering {:.3f} s, galerkin {:.3f} s, renumber {:.3f} s, permute {:.3f} s, "
                  "inv_diag {:.3f} s",
                  l, p.clustering, p.galerkin, p.renumber, p.permute, p.inv_diag);
  }
}

}  // namespace

std::vector<std::string> cmg_smoother_names() { return {"jacobi", "sgs"}; }

CmgSmoother parse_cmg_smoother(const std::string& name) {
  if (name == "jacobi") return CmgSmoother::jacobi;
  if (name == "sgs") return CmgSmoother::sgs;
  throw std::invalid_argument("unknown CMG smoother '" + name + "' (jacobi or sgs)");
}

std::string cmg_smoother_name(CmgSmoother smoother) { return smoother == CmgSmoother::sgs ? "sgs" : "jacobi"; }

void use_gauss_seidel(CmgHierarchy& h) {
  h.smoother = CmgSmoother::sgs;
  for (size_t l = 0; l + 1 < h.levels.size(); ++l) {
    CmgLevel& level = h.levels[l];
    level.weights.clear();  // the Gauss-Seidel cycle has no weights (hierarchy.hpp)
    const std::vector<int32_t> color = greedy_coloring(level.A);
    int32_t colors = 0;
    for (int32_t c : color) colors = std::max(colors, c + 1);
    // color_order is stable: each colour's rows come out ascending, as hierarchy.hpp promises.
    level.color_rows = color_order(color);
    level.color_ptr.assign(static_cast<size_t>(colors) + 1, 0);
    for (int32_t c : color) ++level.color_ptr[static_cast<size_t>(c) + 1];
    std::partial_sum(level.color_ptr.begin(), level.color_ptr.end(), level.color_ptr.begin());
    spdlog::debug("cmg: level {} ({} rows) in {} colours", l, level.A.rows, colors);
  }
}

std::vector<LevelCycle> cycle_of_levels(const std::vector<LevelSize>& sizes, const CmgOptions& options) {
  check_chebyshev_rho(options);
  const size_t levels = sizes.size();
  const bool jacobi = options.smoother == CmgSmoother::jacobi;
  std::vector<LevelCycle> cycles(levels);
  for (size_t l = 0; l + 1 < levels; ++l) {
    const LevelSize& child = sizes[l + 1];
    int& t = cycles[l].repeats;
    t = v_cycle_below(options, sizes[0].rows, child.rows) ? 1 : repeats(sizes[l].nnz, child.nnz);
    if (options.max_repeats > 0 && jacobi) t = std::min(t, options.max_repeats);
  }
  // The weights from the coarsest level up: each level's interval starts at its child's bound.
  // Levels with t_l = 1 keep weight 1: there a weight over-relaxes the whole correction, which
  // cost iterations (ibmpg1, all of whose levels have t_l = 1: 29 -> 33 at rho 0.7).
  double lowest = 0;  // the coarsest solve is exact
  const double rho = options.chebyshev_rho;
  for (size_t l = levels; l-- > 1;) {
    LevelCycle& c = cycles[l - 1];
    if (rho > 0 && jacobi && c.repeats > 1) c.weights = chebyshev_weights(c.repeats, lowest, rho);
    lowest = lowest_error_eigenvalue(c, lowest, rho);
  }
  return cycles;
}

bool coarsening_stalled(size_t level, int32_t rows, int32_t clusters, const CmgOptions& options) {
  if (double(clusters) <= options.stall_ratio * double(rows)) return false;
  spdlog::warn("cmg: coarsening stalled at level {} ({} vertices -> {} clusters); factoring {} vertices directly",
               level, rows, clusters, rows);
  return true;
}

CmgHierarchy build_cmg_hierarchy(const CsrMatrix& G, const CmgOptions& options, CmgBuildTimes* times) {
  check_chebyshev_rho(options);
  CmgBuildTimes t;
  Stopwatch phase, total;
  // Levels first in the numbering the clustering gives (cluster ids by first vertex), ...
  // Level 0, the Laplacian of G, is read from G (GroundedSdd) until it is made in its final
  // numbering (below): it is never stored in this one. raw[0] stays empty unless level 0 is the
  // coarsest.
  const GroundedSdd level0 = grounded_sdd(G);
  std::vector<CsrMatrix> raw(1);
  std::vector<Clustering> clusterings;
  int32_t rows = level0.rows();
  t.laplacian = phase.lap();
  while (rows > options.coarse_rows && int(raw.size()) < options.max_levels) {
    t.levels.emplace_back();
    const bool first = raw.size() == 1;
    // Level 0 coarsened elsewhere (the device) comes with its next level, timed as its clustering.
    std::optional<LevelCoarsening> given;
    if (first && options.coarsen_level0) given = options.coarsen_level0(G);
    Clustering c = given   ? std::move(given->clustering)
                   : first ? cluster_vertices(level0)
                           : cluster_vertices(raw.back());
    t.levels.back().clustering = phase.lap();
    if (coarsening_stalled(raw.size() - 1, rows, c.count, options)) break;
    raw.push_back(given   ? std::move(given->coarse)
                  : first ? galerkin_coarse(level0, c.cluster_of, c.count)
                          : galerkin_coarse(raw.back(), c.cluster_of, c.count));
    rows = raw.back().rows;
    t.levels.back().galerkin = phase.lap();
    clusterings.push_back(std::move(c));
  }
  if (raw.size() == 1) raw[0] = sdd_to_laplacian(G);  // level 0 is the coarsest: stored, not renumbered
  t.levels.resize(raw.size());

  // ... then renumbered from the coarsest level down, so every cluster is a contiguous range
  // ordered like the next level's vertices.
  const size_t levels = raw.size();
  CmgHierarchy h;
  h.n = G.rows;
  h.levels.resize(levels);
  std::vector<int32_t> new_of_old(static_cast<size_t>(raw.back().rows));
  std::iota(new_of_old.begin(), new_of_old.end(), 0);
  h.levels.back().A = std::move(raw.back());
  h.levels.back().inv_diag = h.levels.back().A.diagonal();  // the coarsest, not renumbered
  for (size_t l = levels - 1; l-- > 0;) {
    const FillVector<int32_t>& cluster_of = clusterings[l].cluster_of;
    FillVector<int32_t> key(cluster_of.size());  // unwritten until the loop below
#pragma omp parallel for schedule(static, 4096)
    for (int32_t v = 0; v < static_cast<int32_t>(key.size()); ++v) key[v] = new_of_old[cluster_of[v]];
    counting_sort(key, clusterings[l].count, h.levels[l].cluster_ptr, new_of_old);
    // Read no more: freed before the level's permuted copy is made (level 0's is the build's peak).
    FillVector<int32_t>().swap(key);
    clusterings[l] = Clustering();
    t.levels[l].renumber = phase.lap();
    // Level 0 from G itself (never stored in the clustering's numbering), the others moved
    // in; each level's diagonal (inv_diag, inverted below) taken as its rows are written.
    std::vector<double>* diagonal = &h.levels[l].inv_diag;
    h.levels[l].A = l == 0 ? sdd_to_laplacian(level0, new_of_old, diagonal)
                           : permute_symmetric(std::move(raw[l]), new_of_old, diagonal);
    t.levels[l].permute = phase.lap();
  }
  h.level0_ground = new_of_old[static_cast<size_t>(G.rows)];
  new_of_old.pop_back();  // the ground's: the rest are the unknowns', moved, not copied
  h.level0_of_unknown = std::move(new_of_old);

  std::vector<LevelSize> sizes(levels);
  for (size_t l = 0; l < levels; ++l) {
    CmgLevel& level = h.levels[l];
    double* d = level.inv_diag.data();  // the diagonal, in place
#pragma omp parallel for schedule(static, 4096)
    for (int32_t i = 0; i < level.A.rows; ++i) d[i] = d[i] > 0 ? 0.5 / d[i] : 0.0;
    t.levels[l].inv_diag = phase.lap();
    sizes[l] = {level.A.rows, level.A.nnz()};
  }
  std::vector<LevelCycle> cycles = cycle_of_levels(sizes, options);
  for (size_t l = 0; l < levels; ++l) {
    h.levels[l].repeats = cycles[l].repeats;
    h.levels[l].weights = std::move(cycles[l].weights);
  }
  h.coarse = factor_coarsest(h.levels.back().A);
  t.coarse_factor = phase.lap();
  if (options.smoother == CmgSmoother::sgs) use_gauss_seidel(h);
  t.coloring = phase.lap();
  t.total = total.lap();
  log_times(t);
  if (times) *times = std::move(t);
  return h;
}

}  // namespace pgsim
