#include "mna/upper_triangle.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "mna/prefix_sum.hpp"
#include "mna/touched_vector.hpp"

namespace pgsim {
namespace {

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Whether row j holds column i with value v (bit for bit).
bool holds(const CsrMatrix& A, int32_t j, int32_t i, double v) {
  const int32_t* begin = A.col.data() + A.ptr[size_t(j)];
  const int32_t* end = A.col.data() + A.ptr[size_t(j) + 1];
  const int32_t* at = std::lower_bound(begin, end, i);
  return at != end && *at == i && same_bits(A.val[size_t(at - A.col.data())], v);
}

}  // namespace

std::optional<UpperTriangle> pack_upper(const CsrMatrix& A) {
  const int32_t n = A.rows;
  UpperTriangle U;
  U.rows = n;
  assign_touched(U.ptr, static_cast<size_t>(n) + 1);
  int32_t asymmetric = 0;
#pragma omp parallel for schedule(static, 4096) reduction(+ : asymmetric)
  for (int32_t i = 0; i < n; ++i) {
    int32_t upper = 0;
    for (int32_t k = A.ptr[i]; k < A.ptr[i + 1]; ++k) {
      const int32_t j = A.col[k];
      if (j >= i) ++upper;
      if (j != i && !holds(A, j, i, A.val[k])) ++asymmetric;
    }
    U.ptr[size_t(i) + 1] = upper;
  }
  if (asymmetric > 0) return std::nullopt;
  prefix_sum(U.ptr);
  assign_touched(U.col, static_cast<size_t>(U.ptr[size_t(n)]));
  assign_touched(U.val, U.col.size());
#pragma omp parallel for schedule(static, 4096)
  for (int32_t i = 0; i < n; ++i) {
    const int32_t first = A.ptr[i + 1] - (U.ptr[size_t(i) + 1] - U.ptr[size_t(i)]);  // sorted: the upper part is the tail
    std::copy(A.col.begin() + first, A.col.begin() + A.ptr[i + 1], U.col.begin() + U.ptr[size_t(i)]);
    std::copy(A.val.begin() + first, A.val.begin() + A.ptr[i + 1], U.val.begin() + U.ptr[size_t(i)]);
  }
  return U;
}

CsrMatrix unpack_upper(const UpperTriangle& U) {
  const int32_t n = U.rows;
  const size_t un = static_cast<size_t>(n);
  // Row i's lower part is column i of the upper triangle: counted, then filled through a cursor
  // per row in any order and sorted (the columns are distinct, so the result is unique).
  std::vector<int32_t> lower;
  assign_touched(lower, un);
#pragma omp parallel for schedule(static, 4096)
  for (int32_t j = 0; j < n; ++j)
    for (int32_t k = U.ptr[size_t(j)]; k < U.ptr[size_t(j) + 1]; ++k)
      if (U.col[size_t(k)] != j) {
#pragma omp atomic
        ++lower[size_t(U.col[size_t(k)])];
      }
  CsrMatrix A;
  A.rows = n;
  assign_touched(A.ptr, un + 1);
#pragma omp parallel for schedule(static, 4096)
  for (int32_t i = 0; i < n; ++i) A.ptr[size_t(i) + 1] = lower[size_t(i)] + U.ptr[size_t(i) + 1] - U.ptr[size_t(i)];
  prefix_sum(A.ptr);
  assign_touched(A.col, static_cast<size_t>(A.ptr[un]));
  assign_touched(A.val, A.col.size());
#pragma omp parallel for schedule(static, 4096)
  for (int32_t i = 0; i < n; ++i) {
    const size_t at = size_t(A.ptr[size_t(i)] + lower[size_t(i)]);
    std::copy(U.col.begin() + U.ptr[size_t(i)], U.col.begin() + U.ptr[size_t(i) + 1], A.col.begin() + at);
    std::copy(U.val.begin() + U.ptr[size_t(i)], U.val.begin() + U.ptr[size_t(i) + 1], A.val.begin() + at);
    lower[size_t(i)] = A.ptr[size_t(i)];  // from here on: row i's next free lower slot
  }
#pragma omp parallel for schedule(static, 4096)
  for (int32_t j = 0; j < n; ++j)
    for (int32_t k = U.ptr[size_t(j)]; k < U.ptr[size_t(j) + 1]; ++k) {
      const int32_t i = U.col[size_t(k)];
      if (i == j) continue;
      int32_t slot;
#pragma omp atomic capture
      slot = lower[size_t(i)]++;
      A.col[size_t(slot)] = j;
      A.val[size_t(slot)] = U.val[size_t(k)];
    }
#pragma omp parallel for schedule(static, 4096)
  for (int32_t i = 0; i < n; ++i)
    sort_row(A.col.data() + A.ptr[size_t(i)], A.val.data() + A.ptr[size_t(i)], lower[size_t(i)] - A.ptr[size_t(i)]);
  return A;
}

}  // namespace pgsim
