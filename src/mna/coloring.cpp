#include "mna/coloring.hpp"

#include <algorithm>

namespace pgsim {

std::vector<int32_t> greedy_coloring(const CsrMatrix& A) {
  std::vector<int32_t> color(static_cast<size_t>(A.rows), -1);
  std::vector<int32_t> seen_by;  // seen_by[c] == i: colour c is taken by a neighbour of row i
  for (int32_t i = 0; i < A.rows; ++i) {
    for (int32_t k = A.ptr[i]; k < A.ptr[i + 1]; ++k) {
      const int32_t c = A.col[k] == i ? -1 : color[A.col[k]];
      if (c < 0) continue;
      if (c >= static_cast<int32_t>(seen_by.size())) seen_by.resize(static_cast<size_t>(c) + 1, -1);
      seen_by[c] = i;
    }
    int32_t c = 0;
    while (c < static_cast<int32_t>(seen_by.size()) && seen_by[c] == i) ++c;
    color[i] = c;
  }
  return color;
}

std::vector<int32_t> color_order(const std::vector<int32_t>& color) {
  std::vector<int32_t> perm(color.size());
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int32_t>(i);
  std::stable_sort(perm.begin(), perm.end(), [&](int32_t a, int32_t b) { return color[a] < color[b]; });
  return perm;
}

std::vector<int32_t> inverse_permutation(const std::vector<int32_t>& p) {
  std::vector<int32_t> inverse(p.size());
  for (size_t i = 0; i < p.size(); ++i) inverse[p[i]] = static_cast<int32_t>(i);
  return inverse;
}

}  // namespace pgsim
