#include "dist/coarse_space.hpp"

#include <algorithm>
#include <stdexcept>

namespace pgsim::dist {
namespace {

// Level l's vertex -> level l + 1's vertex (the cluster holding it).
std::vector<int32_t> cluster_of(const CmgLevel& level) {
  const std::vector<int32_t>& ptr = level.cluster_ptr;  // cluster c = vertices [ptr[c], ptr[c+1])
  std::vector<int32_t> cluster(static_cast<size_t>(level.A.rows));
  for (size_t c = 0; c + 1 < ptr.size(); ++c)
    for (int32_t v = ptr[c]; v < ptr[c + 1]; ++v) cluster[v] = static_cast<int32_t>(c);
  return cluster;
}

// Moves every vertex of `vertex` (and `ground`) from level l to level l + 1.
void climb(const CmgHierarchy& h, size_t l, std::vector<int32_t>& vertex, int32_t& ground) {
  const std::vector<int32_t> cluster = cluster_of(h.levels[l]);
  for (int32_t& v : vertex) v = cluster[v];
  ground = cluster[ground];
}

// Each of `rows`' vertex on level `level` of h; `ground`: the vertex holding level 0's ground vertex there.
std::vector<int32_t> vertex_on_level(const CmgHierarchy& h, const std::vector<int32_t>& rows, size_t level,
                                     int32_t& ground) {
  std::vector<int32_t> vertex(rows.size());
  for (size_t k = 0; k < rows.size(); ++k) vertex[k] = h.level0_of_unknown[rows[k]];
  ground = h.level0_ground;
  for (size_t l = 0; l < level; ++l) climb(h, l, vertex, ground);
  return vertex;
}

// Per local row: whether it lies within `layers` links of a boundary row, through the block's own couplings.
std::vector<char> near_cut(const RankBlock& block, int layers) {
  const CsrMatrix& A = block.interior;
  std::vector<char> near(static_cast<size_t>(A.rows), 0);
  std::vector<int32_t> front(block.boundary_rows), next;
  for (int32_t i : front) near[i] = 1;
  for (int layer = 0; layer < layers && !front.empty(); ++layer) {
    next.clear();
    for (int32_t i : front)
      for (int32_t k = A.ptr[i]; k < A.ptr[i + 1]; ++k)
        if (!near[A.col[k]]) {
          near[A.col[k]] = 1;
          next.push_back(A.col[k]);
        }
    front.swap(next);
  }
  return near;
}

// The rows near the cut and the others (each ascending), and the others' coarsest vertices:
// what every level's count and the build share.
struct RowSplit {
  std::vector<int32_t> near, far, aggregate;
  int32_t ground = 0;  // the coarsest vertex holding the ground
};

RowSplit split_rows(const RankBlock& block, const CmgHierarchy& h, int layers) {
  if (layers < 0) throw std::invalid_argument("coarse space: layers must be >= 0");
  if (h.n != block.rows()) throw std::invalid_argument("coarse space: the hierarchy is not the block's");
  RowSplit rows;
  const std::vector<char> near = near_cut(block, layers);
  for (int32_t i = 0; i < block.rows(); ++i) (near[i] ? rows.near : rows.far).push_back(i);
  rows.aggregate = vertex_on_level(h, rows.far, h.levels.size() - 1, rows.ground);
  return rows;
}

// Distinct values of `vertex` (vertices of a level of `size` vertices), leaving out `skip`.
int64_t distinct(const std::vector<int32_t>& vertex, int32_t size, int32_t skip) {
  std::vector<char> seen(static_cast<size_t>(size), 0);
  int64_t count = 0;
  for (const int32_t v : vertex)
    if (v != skip && !seen[v]) seen[v] = 1, ++count;
  return count;
}

std::vector<int64_t> counts_by_level(const RowSplit& rows, const CmgHierarchy& h) {
  const size_t coarsest = h.levels.size() - 1;
  const int64_t aggregates = distinct(rows.aggregate, h.levels[coarsest].A.rows, rows.ground);
  int32_t ground = 0;
  std::vector<int32_t> group = vertex_on_level(h, rows.near, 0, ground);
  std::vector<int64_t> counts;
  for (size_t l = 0;; ++l) {
    counts.push_back(aggregates + distinct(group, h.levels[l].A.rows, -1));
    if (l == coarsest) return counts;
    climb(h, l, group, ground);
  }
}

CoarseSpace build(const RowSplit& rows, const CmgHierarchy& h, int group_level) {
  const size_t coarsest = h.levels.size() - 1;
  const size_t level = std::min(static_cast<size_t>(std::max(group_level, 0)), coarsest);
  int32_t unused = 0;
  const std::vector<int32_t> group = vertex_on_level(h, rows.near, level, unused);
  // Numbered in order of first row: walk the rows, each from whichever list holds it.
  CoarseSpace s;
  s.unknown_of_row.assign(rows.near.size() + rows.far.size(), -1);
  std::vector<int32_t> unknown_of_group(static_cast<size_t>(h.levels[level].A.rows), -1);
  std::vector<int32_t> unknown_of_aggregate(static_cast<size_t>(h.levels[coarsest].A.rows), -1);
  size_t a = 0, b = 0;
  for (int32_t i = 0; i < static_cast<int32_t>(s.unknown_of_row.size()); ++i) {
    if (a < rows.near.size() && rows.near[a] == i) {
      int32_t& u = unknown_of_group[group[a++]];
      if (u < 0) u = s.count++;
      s.unknown_of_row[i] = u;
    } else if (const int32_t v = rows.aggregate[b++]; v != rows.ground) {
      int32_t& u = unknown_of_aggregate[v];
      if (u < 0) u = s.count++;
      s.unknown_of_row[i] = u;
    }
  }
  return s;
}

}  // namespace

CoarseSpace build_coarse_space(const RankBlock& block, const CmgHierarchy& h, int layers, int group_level) {
  return build(split_rows(block, h, layers), h, group_level);
}

std::vector<int64_t> coarse_counts_by_level(const RankBlock& block, const CmgHierarchy& h, int layers) {
  return counts_by_level(split_rows(block, h, layers), h);
}

CoarseSpace build_coarse_space_at(const RankBlock& block, const CmgHierarchy& h, int layers,
                                  const std::function<int(const std::vector<int64_t>&)>& choose) {
  const RowSplit rows = split_rows(block, h, layers);
  return build(rows, h, choose(counts_by_level(rows, h)));
}

}  // namespace pgsim::dist
