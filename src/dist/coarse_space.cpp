#include "dist/coarse_space.hpp"

#include <stdexcept>

namespace pgsim::dist {
namespace {

// Per local row (hierarchy unknown), its vertex on the coarsest level; `ground`: the coarsest
// vertex holding level 0's ground vertex.
std::vector<int32_t> coarsest_vertex(const CmgHierarchy& h, int32_t& ground) {
  std::vector<int32_t> vertex = h.level0_of_unknown;
  ground = h.level0_ground;
  for (size_t l = 0; l + 1 < h.levels.size(); ++l) {
    const std::vector<int32_t>& ptr = h.levels[l].cluster_ptr;  // cluster c = vertices [ptr[c], ptr[c+1])
    std::vector<int32_t> cluster(static_cast<size_t>(h.levels[l].A.rows));
    for (size_t c = 0; c + 1 < ptr.size(); ++c)
      for (int32_t v = ptr[c]; v < ptr[c + 1]; ++v) cluster[v] = static_cast<int32_t>(c);
    for (int32_t& v : vertex) v = cluster[v];
    ground = cluster[ground];
  }
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

}  // namespace

CoarseSpace build_coarse_space(const RankBlock& block, const CmgHierarchy& h, int layers) {
  if (layers < 0) throw std::invalid_argument("coarse space: layers must be >= 0");
  if (h.n != block.rows()) throw std::invalid_argument("coarse space: the hierarchy is not the block's");
  int32_t ground = 0;
  const std::vector<int32_t> vertex = coarsest_vertex(h, ground);
  const std::vector<char> near = near_cut(block, layers);
  CoarseSpace s;
  s.unknown_of_row.assign(static_cast<size_t>(block.rows()), -1);
  std::vector<int32_t> unknown_of_vertex(static_cast<size_t>(h.levels.back().A.rows), -1);
  for (int32_t i = 0; i < block.rows(); ++i) {
    if (near[i]) {
      s.unknown_of_row[i] = s.count++;
    } else if (vertex[i] != ground) {
      int32_t& u = unknown_of_vertex[vertex[i]];
      if (u < 0) u = s.count++;
      s.unknown_of_row[i] = u;
    }
  }
  return s;
}

}  // namespace pgsim::dist
