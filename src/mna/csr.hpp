#pragma once
// Compressed sparse row matrix, the one matrix layout shared by mna, cmg, pcg and gpu.
#include <cstdint>
#include <vector>

#include "parser/default_init.hpp"

namespace pgsim {

// The arrays are FillVectors: a builder sizes them without a serial zero fill (resize() leaves
// them unwritten) and writes every element in its parallel loops.
struct CsrMatrix {
  int32_t rows = 0;
  FillVector<int32_t> ptr{0};  // rows + 1 offsets into col/val
  FillVector<int32_t> col;     // sorted within each row
  FillVector<double> val;

  int64_t nnz() const { return static_cast<int64_t>(col.size()); }
  // y = A x, rows in parallel.
  void multiply(const double* x, double* y) const;
  // The diagonal (zero where a row stores none).
  std::vector<double> diagonal() const;
};

// Sorts one row's entries by column, stably: entries of equal columns keep their order (the CMG
// Galerkin product sums them in that order, on the host and on the device alike). Insertion sort
// for the short rows of grids (5 to 30 entries), a merge sort for longer ones, a radix sort above
// kRadixSortRow (a ground vertex, hubs).
void sort_row(int32_t* col, double* val, int32_t len);

// Sorts one row by column with a radix sort, stably: entries of equal columns keep their order.
// For long rows (sort_row above kRadixSortRow entries).
void radix_sort_row(int32_t* col, double* val, int32_t len);

// Rows longer than this are sorted by radix (sort_row): a level's hub row, the ground vertex's
// (145,694 entries on a 5M-node grid's level 0), and the CMG's gathered hub rows.
constexpr int32_t kRadixSortRow = 4096;

}  // namespace pgsim
