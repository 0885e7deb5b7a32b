#include "dist/coarse_space.hpp"

#include <algorithm>
#include <climits>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "mna/touched_vector.hpp"

namespace pgsim::dist {
namespace {

// Level l's vertex v -> its cluster on level l + 1: the c with cluster_ptr[c] <= v < cluster_ptr[c + 1].
int32_t cluster_of(const CmgLevel& level, int32_t v) {
  const std::vector<int32_t>& ptr = level.cluster_ptr;
  return static_cast<int32_t>(std::upper_bound(ptr.begin(), ptr.end(), v) - ptr.begin()) - 1;
}

// Each of `rows`' vertex on level `level` of h (rows near the cut: few, each climbing alone).
std::vector<int32_t> vertex_on_level(const CmgHierarchy& h, const std::vector<int32_t>& rows, size_t level) {
  std::vector<int32_t> vertex(rows.size());
#pragma omp parallel for schedule(static, 4096)
  for (std::ptrdiff_t k = 0; k < std::ptrdiff_t(rows.size()); ++k) {
    int32_t v = h.level0_of_unknown[size_t(rows[size_t(k)])];
    for (size_t l = 0; l < level; ++l) v = cluster_of(h.levels[l], v);
    vertex[size_t(k)] = v;
  }
  return vertex;
}

// Level 0's vertex -> its vertex on the coarsest level, composed from the top: level l's map is
// level l + 1's read through l's clusters, a pass over each level (about 1.3 passes over level 0
// in all, the levels shrinking) on all threads, where climbing every row level by level would
// take a pass over the rows per level.
std::vector<int32_t> coarsest_of_level0(const CmgHierarchy& h) {
  const size_t coarsest = h.levels.size() - 1;
  std::vector<int32_t> above(static_cast<size_t>(h.levels[coarsest].A.rows));
  std::iota(above.begin(), above.end(), 0);
  for (size_t l = coarsest; l-- > 0;) {
    const std::vector<int32_t>& ptr = h.levels[l].cluster_ptr;
    std::vector<int32_t> here;
    size_for_overwrite(here, static_cast<size_t>(h.levels[l].A.rows));
#pragma omp parallel for schedule(static, 1024)
    for (std::ptrdiff_t c = 0; c < std::ptrdiff_t(ptr.size()) - 1; ++c)
      for (int32_t v = ptr[size_t(c)]; v < ptr[size_t(c) + 1]; ++v) here[size_t(v)] = above[size_t(c)];
    above.swap(here);
  }
  return above;
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

constexpr int32_t kNear = -2;        // RowSplit::aggregate of a row near the cut
constexpr int32_t kNoRow = INT32_MAX;  // RowSplit::first_row of an aggregate no coarse unknown takes

// The rows near the cut, and the coarsest vertex of every other row: what every level's count
// and the build share.
struct RowSplit {
  std::vector<int32_t> near;       // ascending
  std::vector<int32_t> aggregate;  // per row: its coarsest vertex, kNear, or -1 (the ground's: no unknown)
  std::vector<int32_t> first_row;  // per coarsest vertex: the first row whose aggregate it is, or kNoRow
  int64_t aggregates = 0;          // coarsest vertices with a first row
};

RowSplit split_rows(const RankBlock& block, const CmgHierarchy& h, int layers) {
  if (layers < 0) throw std::invalid_argument("coarse space: layers must be >= 0");
  if (h.n != block.rows()) throw std::invalid_argument("coarse space: the hierarchy is not the block's");
  RowSplit rows;
  const std::vector<char> near = near_cut(block, layers);
  for (int32_t i = 0; i < block.rows(); ++i)
    if (near[size_t(i)]) rows.near.push_back(i);
  const std::vector<int32_t> coarsest = coarsest_of_level0(h);
  const int32_t ground = coarsest[size_t(h.level0_ground)];
  const auto n = std::ptrdiff_t(block.rows());
  size_for_overwrite(rows.aggregate, size_t(n));
  rows.first_row.assign(h.levels.back().A.rows, kNoRow);
  // Each thread takes one contiguous range of rows (schedule static), so the first row it sees of
  // an aggregate is its range's first; the least over the threads is the first of all.
#pragma omp parallel
  {
    std::vector<int32_t> first(rows.first_row.size(), kNoRow);
#pragma omp for schedule(static)
    for (std::ptrdiff_t i = 0; i < n; ++i) {
      int32_t v = coarsest[size_t(h.level0_of_unknown[size_t(i)])];
      if (near[size_t(i)]) v = kNear;
      else if (v == ground) v = -1;
      else if (first[size_t(v)] == kNoRow) first[size_t(v)] = int32_t(i);
      rows.aggregate[size_t(i)] = v;
    }
#pragma omp critical
    for (size_t v = 0; v < first.size(); ++v) rows.first_row[v] = std::min(rows.first_row[v], first[v]);
  }
  rows.aggregates = std::count_if(rows.first_row.begin(), rows.first_row.end(), [](int32_t r) { return r != kNoRow; });
  return rows;
}

// Distinct values of `vertex`.
int64_t distinct(std::vector<int32_t> vertex) {
  std::sort(vertex.begin(), vertex.end());
  return std::unique(vertex.begin(), vertex.end()) - vertex.begin();
}

std::vector<int64_t> counts_by_level(const RowSplit& rows, const CmgHierarchy& h) {
  std::vector<int64_t> counts;
  for (size_t l = 0; l < h.levels.size(); ++l) counts.push_back(rows.aggregates + distinct(vertex_on_level(h, rows.near, l)));
  return counts;
}

CoarseSpace build(const RowSplit& rows, const CmgHierarchy& h, int group_level) {
  const size_t coarsest = h.levels.size() - 1;
  const size_t level = std::min(static_cast<size_t>(std::max(group_level, 0)), coarsest);
  const std::vector<int32_t> group = vertex_on_level(h, rows.near, level);
  // Numbered in order of first row: the groups' first rows (in near's order, ascending) merged
  // with the aggregates' (sorted).
  std::vector<std::pair<int32_t, int32_t>> firsts;  // (first row, group or aggregate); a group's marked by its near index
  std::vector<int32_t> unknown_of_group;
  if (!group.empty()) unknown_of_group.assign(static_cast<size_t>(h.levels[level].A.rows), -1);
  for (size_t k = 0; k < group.size(); ++k)
    if (int32_t& u = unknown_of_group[size_t(group[k])]; u == -1) u = kNear, firsts.push_back({rows.near[k], -1 - int32_t(k)});
  for (size_t v = 0; v < rows.first_row.size(); ++v)
    if (rows.first_row[v] != kNoRow) firsts.push_back({rows.first_row[v], int32_t(v)});
  std::sort(firsts.begin(), firsts.end());  // first rows are distinct
  CoarseSpace s;
  std::vector<int32_t> unknown_of_aggregate(rows.first_row.size(), -1);
  for (const auto& [row, key] : firsts) {
    if (key >= 0) unknown_of_aggregate[size_t(key)] = s.count++;
    else unknown_of_group[size_t(group[size_t(-1 - key)])] = s.count++;
  }
  const auto n = std::ptrdiff_t(rows.aggregate.size());
  size_for_overwrite(s.unknown_of_row, size_t(n));
#pragma omp parallel for schedule(static, 4096)
  for (std::ptrdiff_t i = 0; i < n; ++i) {
    const int32_t v = rows.aggregate[size_t(i)];
    s.unknown_of_row[size_t(i)] = v >= 0 ? unknown_of_aggregate[size_t(v)] : -1;
  }
  for (size_t k = 0; k < group.size(); ++k) s.unknown_of_row[size_t(rows.near[k])] = unknown_of_group[size_t(group[k])];
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
