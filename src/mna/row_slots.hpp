#pragma once
// Rows of a CsrMatrix written in place, each over a slot of G.col and G.val sized for its most
// entries (a builder's count before parallel conductances are summed), then made contiguous: what
// reduce()'s stamp (mna/reduce.cpp) and a rank's stamp (dist/owned_rows.cpp) share, so that each
// row is built once, where a first pass to count its exact length would look its elements up again.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "mna/csr.hpp"
#include "mna/prefix_sum.hpp"
#include "mna/touched_vector.hpp"

namespace pgsim {

// On entry row u's G.ptr[u + 1] entries are at the start of its slot, at slot(u) in G.col and
// G.val, the slots in row order and covering those arrays; G.ptr[0] is 0. On return G.ptr holds
// the rows' offsets, and the entries have been moved (into arrays of their exact size) only when
// some row left its slot's end unused: otherwise the rows already lie end to end.
template <class Slot>
void close_row_gaps(CsrMatrix& G, Slot slot) {
  const int32_t n = G.rows;
  prefix_sum(G.ptr);
  if (size_t(G.ptr[size_t(n)]) == G.col.size()) return;
  decltype(G.col) col;
  decltype(G.val) val;
  size_for_overwrite(col, size_t(G.ptr[size_t(n)]));
  size_for_overwrite(val, col.size());
#pragma omp parallel for schedule(static, 4096)
  for (int32_t u = 0; u < n; ++u) {
    const size_t to = size_t(G.ptr[size_t(u)]), length = size_t(G.ptr[size_t(u) + 1]) - to;
    std::copy_n(G.col.data() + slot(u), length, col.data() + to);
    std::copy_n(G.val.data() + slot(u), length, val.data() + to);
  }
  G.col.swap(col);
  G.val.swap(val);
}

}  // namespace pgsim
