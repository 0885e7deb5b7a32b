#pragma once
// Sparse triangular matrices in CSR: the CPU reference solve, the dependency analysis that the
// GPU solvers schedule by (level sets, independent row blocks), and the colouring that reorders
// a symmetric matrix so that its triangles have few levels.
#include <cstdint>
#include <vector>

#include "mna/coloring.hpp"  // greedy_coloring, color_order: the colouring named above
#include "mna/csr.hpp"

namespace pgsim {

// A triangle stores its diagonal: last in every row of a lower triangle, first in every row of
// an upper one (columns sorted). Rows of a lower triangle are solved first to last, of an upper
// one last to first; "processing order" below means that order.
enum class Triangle { lower, upper };

// Throws std::invalid_argument naming the row when T is not a triangle of kind `tri` with a
// stored, nonzero diagonal.
void check_triangle(const CsrMatrix& T, Triangle tri);

// Solves T x = b by substitution (the reference every GPU method is tested against).
void solve_triangular(const CsrMatrix& T, Triangle tri, const double* b, double* x);

// A^T as a matrix of max(A.rows, largest column + 1) rows (square for a square A).
CsrMatrix transpose(const CsrMatrix& A);
// A^T with `cols` rows: A's column count, at least its largest column + 1 (a rectangular A).
CsrMatrix transpose(const CsrMatrix& A, int32_t cols);

// Level sets: level(i) = 1 + max level of the rows i depends on (0 without dependencies).
// Rows of level l are rows[ptr[l], ptr[l+1]), ascending.
struct LevelSets {
  std::vector<int32_t> ptr{0};
  std::vector<int32_t> rows;
  int32_t count() const { return static_cast<int32_t>(ptr.size()) - 1; }
};
LevelSets level_sets(const CsrMatrix& T, Triangle tri);

// Cuts the rows, in processing order, into maximal contiguous blocks of mutually independent
// rows; block b is rows [first[b], first[b] + size[b]) in index order. After a colour
// permutation every colour class is one block (or a few), so one launch per block solves T.
struct RowBlocks {
  std::vector<int32_t> first, size;
  int32_t count() const { return static_cast<int32_t>(first.size()); }
};
RowBlocks independent_blocks(const CsrMatrix& T, Triangle tri);

// CapelliniSpTRSV's parallel granularity (Su et al. 2020, eq. 1, common logarithms, biases
// 0.01): log(log(rows per level) / log(nonzeros per row + 0.01) + 0.01). Above ~0.7 the
// warp-per-row solve leaves most lanes idle and thread-per-row wins.
double parallel_granularity(int32_t rows, int32_t levels, int64_t nnz);

}  // namespace pgsim
