#pragma once
// Parallel loops over a CSR matrix's rows that a hub row does not hold up. Every CMG level has one:
// the ground vertex's row (level 0) and its cluster's (below) join the vertices with an excess, a
// few percent of all rows (145,694 entries of level 0's row on a 5M-node grid, 133,287 on level
// 1's). A plain loop over rows gave all of it to one thread, last: on that grid, one thread,
// the hub rows took 208 ms of the build's work (Galerkin 97, exact symmetry 31, permutation 79 on the development VM),
// each a serial tail after the other threads were done.
#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "parser/default_init.hpp"

namespace pgsim {

// Entries per piece of for_each_entry_piece: a few pages of a level's arrays.
constexpr int32_t kEntriesPerPiece = 4096;
// Rows of more entries run first in for_each_row_long_first.
constexpr int32_t kLongRow = 4096;

// body(row, begin, end) for pieces [begin, end) of the rows' entries, ptr a CsrMatrix's row offsets
// (size rows + 1): the entries are split into pieces of kEntriesPerPiece, so a long row runs on many
// threads. Every entry is in exactly one call; body must not depend on the pieces' order.
template <class Body>
void for_each_entry_piece(const FillVector<int32_t>& ptr, Body body) {
  const int32_t rows = static_cast<int32_t>(ptr.size()) - 1;
  const int32_t entries = ptr.back();
  const int32_t pieces = (entries + kEntriesPerPiece - 1) / kEntriesPerPiece;
#pragma omp parallel for schedule(static)
  for (int32_t p = 0; p < pieces; ++p) {
    int32_t k = p * kEntriesPerPiece;
    const int32_t end = std::min(entries, k + kEntriesPerPiece);
    // The row holding entry k: the last r with ptr[r] <= k (empty rows before it are skipped).
    int32_t r = static_cast<int32_t>(std::upper_bound(ptr.begin(), ptr.end(), k) - ptr.begin()) - 1;
    for (; k < end && r < rows; ++r) {
      const int32_t stop = std::min(end, ptr[static_cast<size_t>(r) + 1]);
      if (stop > k) body(r, k, stop);
      k = std::max(k, stop);
    }
  }
}

// Whether for_each_entry_piece gives all of row r's entries [ptr[r], ptr[r + 1]) to one body call,
// [begin, end): then that call can finish the row (for_each_split_row finishes the others).
inline bool whole_row(const FillVector<int32_t>& ptr, int32_t r, int32_t begin, int32_t end) {
  return begin == ptr[static_cast<size_t>(r)] && end == ptr[static_cast<size_t>(r) + 1];
}

// row(r) for every non-empty row that for_each_entry_piece splits over two or more pieces (the
// rows crossing a piece boundary: about one per piece, and every row longer than a piece), each
// once, on all threads. Every other row is a whole_row in its one piece.
template <class Row>
void for_each_split_row(const FillVector<int32_t>& ptr, Row row) {
  const int32_t entries = ptr.back();
  const int32_t pieces = (entries + kEntriesPerPiece - 1) / kEntriesPerPiece;
#pragma omp parallel for schedule(dynamic, 64)
  for (int32_t p = 1; p < pieces; ++p) {
    const int32_t boundary = p * kEntriesPerPiece;  // piece p's first entry
    // The row holding it (the last r with ptr[r] <= boundary) is split if it starts before the
    // boundary, and called here from its first boundary only.
    const int32_t r = static_cast<int32_t>(std::upper_bound(ptr.begin(), ptr.end(), boundary) - ptr.begin()) - 1;
    const int32_t start = ptr[static_cast<size_t>(r)];
    if (start < boundary && start >= boundary - kEntriesPerPiece) row(r);
  }
}

// row(r) for every r in [0, rows) on all threads, the rows with length(r) > kLongRow first (one
// each to the first threads free) and the others in chunks behind them: a long row then runs
// beside the short ones instead of after them. For work that cannot be split within a row.
template <class Length, class Row>
void for_each_row_long_first(int32_t rows, Length length, Row row) {
  std::vector<int32_t> long_rows;
#pragma omp parallel
  {
    std::vector<int32_t> mine;
#pragma omp for schedule(static, 4096) nowait
    for (int32_t r = 0; r < rows; ++r)
      if (length(r) > kLongRow) mine.push_back(r);
#pragma omp critical
    long_rows.insert(long_rows.end(), mine.begin(), mine.end());
#pragma omp barrier
#pragma omp for schedule(dynamic, 1) nowait
    for (size_t i = 0; i < long_rows.size(); ++i) row(long_rows[i]);
#pragma omp for schedule(dynamic, 1024)
    for (int32_t r = 0; r < rows; ++r)
      if (length(r) <= kLongRow) row(r);
  }
}

}  // namespace pgsim
