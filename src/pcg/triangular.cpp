#include "pcg/triangular.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace pgsim {
namespace {

// Position of row i's diagonal and its off-diagonal range [begin, end).
struct RowParts {
  int32_t diag, begin, end;
};
RowParts parts(const CsrMatrix& T, Triangle tri, int32_t i) {
  const int32_t lo = T.ptr[i], hi = T.ptr[i + 1];
  return tri == Triangle::lower ? RowParts{hi - 1, lo, hi - 1} : RowParts{lo, lo + 1, hi};
}

int32_t row_at(Triangle tri, int32_t n, int32_t k) { return tri == Triangle::lower ? k : n - 1 - k; }

}  // namespace

void check_triangle(const CsrMatrix& T, Triangle tri) {
  if (static_cast<int32_t>(T.ptr.size()) != T.rows + 1 || T.ptr.back() != T.nnz() ||
      T.val.size() != T.col.size())
    throw std::invalid_argument("triangular matrix: inconsistent CSR arrays");
  const char* kind = tri == Triangle::lower ? "lower" : "upper";
  for (int32_t i = 0; i < T.rows; ++i) {
    if (T.ptr[i + 1] <= T.ptr[i]) throw std::invalid_argument("row " + std::to_string(i) + " of the " + kind + " triangle is empty");
    const RowParts p = parts(T, tri, i);
    if (T.col[p.diag] != i || T.val[p.diag] == 0.0)
      throw std::invalid_argument("row " + std::to_string(i) + " of the " + kind +
                                  " triangle lacks a nonzero diagonal where it belongs");
    for (int32_t k = p.begin; k < p.end; ++k)
      if ((tri == Triangle::lower ? T.col[k] >= i : T.col[k] <= i) || (k > p.begin && T.col[k] <= T.col[k - 1]))
        throw std::invalid_argument("row " + std::to_string(i) + " of the " + kind +
                                    " triangle has a column out of the triangle or unsorted");
  }
}

void solve_triangular(const CsrMatrix& T, Triangle tri, const double* b, double* x) {
  for (int32_t k = 0; k < T.rows; ++k) {
    const int32_t i = row_at(tri, T.rows, k);
    const RowParts p = parts(T, tri, i);
    double s = b[i];
    for (int32_t q = p.begin; q < p.end; ++q) s -= T.val[q] * x[T.col[q]];
    x[i] = s / T.val[p.diag];
  }
}

CsrMatrix transpose(const CsrMatrix& A) {
  int32_t cols = 0;
  for (int32_t c : A.col) cols = std::max(cols, c + 1);
  return transpose(A, std::max(cols, A.rows));
}

CsrMatrix transpose(const CsrMatrix& A, int32_t cols) {
  CsrMatrix B;
  B.rows = cols;
  B.ptr.assign(static_cast<size_t>(cols) + 1, 0);
  for (int32_t c : A.col) ++B.ptr[c + 1];
  for (int32_t i = 0; i < cols; ++i) B.ptr[i + 1] += B.ptr[i];
  B.col.resize(A.col.size());
  B.val.resize(A.val.size());
  std::vector<int32_t> next(B.ptr.begin(), B.ptr.end() - 1);
  for (int32_t i = 0; i < A.rows; ++i)  // rows in order, so every row of B comes out sorted
    for (int32_t k = A.ptr[i]; k < A.ptr[i + 1]; ++k) {
      const int32_t at = next[A.col[k]]++;
      B.col[at] = i;
      B.val[at] = A.val[k];
    }
  return B;
}

LevelSets level_sets(const CsrMatrix& T, Triangle tri) {
  std::vector<int32_t> level(static_cast<size_t>(T.rows), 0);
  int32_t levels = 0;
  for (int32_t k = 0; k < T.rows; ++k) {
    const int32_t i = row_at(tri, T.rows, k);
    const RowParts p = parts(T, tri, i);
    int32_t l = 0;
    for (int32_t q = p.begin; q < p.end; ++q) l = std::max(l, level[T.col[q]] + 1);
    level[i] = l;
    levels = std::max(levels, l + 1);
  }
  LevelSets s;
  s.ptr.assign(static_cast<size_t>(levels) + 1, 0);
  for (int32_t l : level) ++s.ptr[l + 1];
  for (int32_t l = 0; l < levels; ++l) s.ptr[l + 1] += s.ptr[l];
  s.rows.resize(static_cast<size_t>(T.rows));
  std::vector<int32_t> next(s.ptr.begin(), s.ptr.end() - 1);
  for (int32_t i = 0; i < T.rows; ++i) s.rows[next[level[i]]++] = i;
  return s;
}

RowBlocks independent_blocks(const CsrMatrix& T, Triangle tri) {
  RowBlocks blocks;
  int32_t start = 0;  // processing position where the current block began
  for (int32_t k = 0; k < T.rows; ++k) {
    const int32_t i = row_at(tri, T.rows, k);
    const RowParts p = parts(T, tri, i);
    // Row i depends on the current block when a column lies between the block's start and i.
    const int32_t block_start_row = row_at(tri, T.rows, start);
    bool depends = false;
    for (int32_t q = p.begin; q < p.end && !depends; ++q)
      depends = tri == Triangle::lower ? T.col[q] >= block_start_row : T.col[q] <= block_start_row;
    if (depends && k > start) {
      blocks.first.push_back(std::min(block_start_row, row_at(tri, T.rows, k - 1)));
      blocks.size.push_back(k - start);
      start = k;
    }
  }
  if (T.rows > start) {
    blocks.first.push_back(std::min(row_at(tri, T.rows, start), row_at(tri, T.rows, T.rows - 1)));
    blocks.size.push_back(T.rows - start);
  }
  return blocks;
}

double parallel_granularity(int32_t rows, int32_t levels, int64_t nnz) {
  if (rows == 0 || levels == 0) return 0;
  const double per_level = double(rows) / levels, per_row = double(nnz) / rows;
  return std::log10(std::log10(per_level) / std::log10(per_row + 0.01) + 0.01);
}

}  // namespace pgsim
