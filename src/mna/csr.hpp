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

// Sorts one row's entries by column: insertion sort for the short rows of grids (5 to 30
// entries), a general sort for the few long ones (a ground vertex, hubs).
void sort_row(int32_t* col, double* val, int32_t len);

// Sorts one row by column with a radix sort, stably: entries of equal columns keep their order.
// For long rows (a level's hub row, sort_distinct_row; the CMG's gathered hub rows).
void radix_sort_row(int32_t* col, double* val, int32_t len);

// Rows of distinct columns longer than this are sorted by radix (sort_distinct_row).
constexpr int32_t kRadixSortRow = 4096;
// Sorts one row of distinct columns by column: sort_row up to kRadixSortRow entries, a radix sort
// above (a level's hub row: the ground vertex's, 145,694 entries on a 5M-node grid's level 0).
// With distinct columns every sort gives the same row.
void sort_distinct_row(int32_t* col, double* val, int32_t len);

}  // namespace pgsim
