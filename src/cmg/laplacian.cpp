#include "cmg/laplacian.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

#include "mna/prefix_sum.hpp"
#include "mna/touched_vector.hpp"
#include "parser/default_init.hpp"

namespace pgsim {
namespace {

// Vertices per block of the ground row's parallel placement.
constexpr int32_t kGroundBlock = 65536;
// Renumbered, vertex i's row is written at a random place (number(i)'s): each row's first store
// waited for its cache lines to come from memory, one row at a time per thread. The lines of the
// vertex kAhead positions on are requested first (its row offset 2 kAhead on, which that needs),
// so several rows' misses are in flight at once.
constexpr int32_t kAhead = 16;

// Both forms: vertex i is row number(i) of L. Every row's entries are made in G's column order
// (the ground last), which is the final order without a renumbering; with one, each row is
// sorted after. The diagonals' sums run in that same order either way, so the values are the
// same bits. diagonal: see sdd_to_laplacian.
template <class Number>
CsrMatrix laplacian(const GroundedSdd& grounded, Number number, bool renumbered, std::vector<double>* diagonal) {
  const CsrMatrix& G = *grounded.G;
  const FillVector<double>& excess = grounded.excess;
  const int32_t n = G.rows;
  // count[r + 1]: row r's length, written for every row r = number(i) of [0, n] below.
  FillVector<int32_t> count(static_cast<size_t>(n) + 2);
  count[0] = 0;
#pragma omp parallel for schedule(static, 4096)
  for (int32_t i = 0; i < n; ++i) {
    if (renumbered && i + kAhead < n) __builtin_prefetch(&count[size_t(number(i + kAhead)) + 1], 1);
    int32_t entries = 0;
    for (int32_t k = G.ptr[i]; k < G.ptr[i + 1]; ++k) entries += G.col[k] != i && G.val[k] != 0 ? 1 : 0;
    count[size_t(number(i)) + 1] = entries + 1 + (excess[i] > 0 ? 1 : 0);  // off-diagonals, diagonal, ground edge
  }
  const int32_t ground_degree = static_cast<int32_t>(grounded.ground_col.size());
  count[size_t(number(n)) + 1] = ground_degree + 1;

  CsrMatrix L;
  L.rows = n + 1;
  prefix_sum(count);  // count[0] = 0: the row offsets
  L.ptr = std::move(count);
  // Unwritten: the loops below make every row's count entries.
  L.col.resize(static_cast<size_t>(L.ptr[size_t(n) + 1]));
  L.val.resize(L.col.size());
  if (diagonal) size_for_overwrite(*diagonal, static_cast<size_t>(n) + 1);  // every vertex's written below

  const int32_t ground = number(n);
  const int32_t ground_first = L.ptr[size_t(ground)];
#pragma omp parallel
  {
    // The ground row, in increasing column order, diagonal last, made and sorted by one thread
    // while the others make the vertices' rows (dynamically scheduled, so that thread takes fewer
    // of them): its sort (radix, ~4% of the vertices: 1.4M entries on a 50M-node grid) ran on one
    // thread after them, a serial tail. Its sum in G's row order (the placed entries' order:
    // sum - (-e) is sum + e, bit for bit).
#pragma omp single nowait
    {
      int32_t out = ground_first;
      for (int32_t i : grounded.ground_col) {
        L.col[out] = number(i);
        L.val[out] = -excess[i];
        ++out;
      }
      double sum = 0;
      for (int32_t k = ground_first; k < out; ++k) sum -= L.val[k];
      L.col[out] = ground;
      L.val[out] = sum;
      if (diagonal) (*diagonal)[size_t(ground)] = sum;
      ++out;
      if (renumbered) sort_row(L.col.data() + ground_first, L.val.data() + ground_first, out - ground_first);
    }
#pragma omp for schedule(dynamic, 4096) nowait
    for (int32_t i = 0; i < n; ++i) {
      if (renumbered) {
        if (i + 2 * kAhead < n) __builtin_prefetch(&L.ptr[size_t(number(i + 2 * kAhead))]);
        if (i + kAhead < n) {
          const int32_t ahead = number(i + kAhead);
          const size_t at = size_t(L.ptr[size_t(ahead)]);
          __builtin_prefetch(L.col.data() + at, 1);
          __builtin_prefetch(L.val.data() + at, 1);
          if (diagonal) __builtin_prefetch(diagonal->data() + ahead, 1);
        }
      }
      const int32_t first = L.ptr[size_t(number(i))];
      int32_t out = first;
      int32_t diag_at = -1;
      double sum = 0;
      bool placed_diag = false;
      for (int32_t k = G.ptr[i]; k < G.ptr[i + 1]; ++k) {
        const int32_t j = G.col[k];
        if (j == i || G.val[k] == 0) continue;
        if (!placed_diag && j > i) {
          diag_at = out++;
          placed_diag = true;
        }
        L.col[out] = number(j);
        L.val[out] = -std::fabs(G.val[k]);
        sum += std::fabs(G.val[k]);
        ++out;
      }
      if (!placed_diag) diag_at = out++;
      if (excess[i] > 0) {  // the ground vertex n is the largest column
        L.col[out] = ground;
        L.val[out] = -excess[i];
        sum += excess[i];
        ++out;
      }
      L.col[diag_at] = number(i);
      L.val[diag_at] = sum;
      if (diagonal) (*diagonal)[size_t(number(i))] = sum;
      if (renumbered) sort_row(L.col.data() + first, L.val.data() + first, out - first);
    }
  }
  return L;
}

}  // namespace

GroundedSdd grounded_sdd(const CsrMatrix& G) {
  const int32_t n = G.rows;
  GroundedSdd L;
  L.G = &G;
  L.excess.resize(static_cast<size_t>(n));  // unwritten until the first loop
#pragma omp parallel for schedule(static, 4096)
  for (int32_t i = 0; i < n; ++i) {
    double diag = 0, off = 0;
    for (int32_t k = G.ptr[i]; k < G.ptr[i + 1]; ++k) {
      if (G.col[k] == i) {
        diag = G.val[k];
      } else if (G.val[k] != 0) {
        off += std::fabs(G.val[k]);
      }
    }
    L.excess[i] = diag - off;
  }
  // The ground row's columns, the vertices of positive excess in increasing order, placed by
  // blocks of vertices on all threads (one thread scanning all vertices was a serial tail of
  // this pass): block_at[b + 1] counts block b's, then (a prefix sum) where the next block's go.
  const int32_t blocks = (n + kGroundBlock - 1) / kGroundBlock;
  auto block_end = [n](int32_t b) { return int32_t(std::min<int64_t>(n, int64_t(b + 1) * kGroundBlock)); };
  std::vector<int32_t> block_at(static_cast<size_t>(blocks) + 1, 0);
#pragma omp parallel for schedule(static)
  for (int32_t b = 0; b < blocks; ++b) {
    int32_t edges = 0;
    for (int32_t i = b * kGroundBlock; i < block_end(b); ++i) edges += L.excess[i] > 0 ? 1 : 0;
    block_at[size_t(b) + 1] = edges;
  }
  prefix_sum(block_at);
  L.ground_col.resize(static_cast<size_t>(block_at.back()));  // unwritten: every block's placed below
#pragma omp parallel for schedule(static)
  for (int32_t b = 0; b < blocks; ++b) {
    int32_t at = block_at[size_t(b)];
    for (int32_t i = b * kGroundBlock; i < block_end(b); ++i)
      if (L.excess[i] > 0) L.ground_col[size_t(at++)] = i;
  }
  return L;
}

CsrMatrix sdd_to_laplacian(const CsrMatrix& G) {
  return laplacian(grounded_sdd(G), [](int32_t i) { return i; }, false, nullptr);
}

CsrMatrix sdd_to_laplacian(const GroundedSdd& L, const std::vector<int32_t>& new_of_old, std::vector<double>* diagonal) {
  return laplacian(L, [&new_of_old](int32_t i) { return new_of_old[size_t(i)]; }, true, diagonal);
}

}  // namespace pgsim
