#include "mna/upper_triangle.hpp"

#include <omp.h>

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
  // Only the strictly lower entries are looked up in their mirror rows: mirroring is one to one,
  // so when each of them has its mirror and the strictly upper entries are as many, every upper
  // entry is some lower entry's mirror too (half the lookups of checking both sides).
  int64_t unmatched = 0, strict_lower = 0, strict_upper = 0;
#pragma omp parallel for schedule(static, 4096) reduction(+ : unmatched, strict_lower, strict_upper)
  for (int32_t i = 0; i < n; ++i) {
    int32_t k = A.ptr[i];
    const int32_t end = A.ptr[i + 1];
    for (; k < end && A.col[k] < i; ++k)
      if (!holds(A, A.col[k], i, A.val[k])) ++unmatched;
    strict_lower += k - A.ptr[i];
    strict_upper += end - k - (k < end && A.col[k] == i ? 1 : 0);
    U.ptr[size_t(i) + 1] = end - k;
  }
  if (unmatched > 0 || strict_lower != strict_upper) return std::nullopt;
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
  // Row i's lower part is column i of the upper triangle. Each thread owns a block of rows and
  // gathers their lower parts itself, scanning the upper rows j in increasing order: no two
  // threads write one row, and each row's lower part comes out sorted (no atomics, no sort).
  const int32_t blocks = std::max(1, std::min(omp_get_max_threads(), n));
  auto block_begin = [n, blocks](int32_t b) { return int32_t(int64_t(n) * b / blocks); };
  auto last_col = [&U](int32_t j) {  // how far up row j reaches (itself when empty)
    return U.ptr[size_t(j) + 1] > U.ptr[size_t(j)] ? U.col[size_t(U.ptr[size_t(j) + 1]) - 1] : j;
  };
  // A block's lower entries come from upper rows reaching into it: the scan starts at the first
  // such row (on a grid a band's width above the block, not row 0), found through each block's reach.
  std::vector<int32_t> reach(static_cast<size_t>(blocks)), scan_from(static_cast<size_t>(blocks));
#pragma omp parallel for schedule(static, 1)
  for (int32_t b = 0; b < blocks; ++b) {
    int32_t r = -1;
    for (int32_t j = block_begin(b); j < block_begin(b + 1); ++j) r = std::max(r, last_col(j));
    reach[size_t(b)] = r;
  }
#pragma omp parallel for schedule(static, 1)
  for (int32_t b = 0; b < blocks; ++b) {
    const int32_t lo = block_begin(b);
    int32_t s = 0;
    while (s < b && reach[size_t(s)] < lo) ++s;
    int32_t j = block_begin(s);
    while (j < lo && last_col(j) < lo) ++j;
    scan_from[size_t(b)] = j;
  }
  // Calls f(i, j, k) for each upper entry k = (j, i), j < i, with i in block b, in increasing j.
  auto for_lower = [&](int32_t b, auto&& f) {
    const int32_t lo = block_begin(b), hi = block_begin(b + 1);
    for (int32_t j = scan_from[size_t(b)]; j < hi; ++j) {
      const int32_t* col = U.col.data();
      const int32_t* end = col + U.ptr[size_t(j) + 1];
      for (const int32_t* c = std::lower_bound(col + U.ptr[size_t(j)], end, std::max(lo, j + 1)); c < end && *c < hi; ++c)
        f(*c, j, size_t(c - col));
    }
  };
  FillVector<int32_t> next;  // row i's lower count, then its next free lower slot
  assign_parallel(next, un);
  CsrMatrix A;
  A.rows = n;
  assign_touched(A.ptr, un + 1);
#pragma omp parallel for schedule(static, 1)
  for (int32_t b = 0; b < blocks; ++b) {
    for (int32_t i = block_begin(b); i < block_begin(b + 1); ++i) next[size_t(i)] = 0;
    for_lower(b, [&next](int32_t i, int32_t, size_t) { ++next[size_t(i)]; });
    for (int32_t i = block_begin(b); i < block_begin(b + 1); ++i)
      A.ptr[size_t(i) + 1] = next[size_t(i)] + U.ptr[size_t(i) + 1] - U.ptr[size_t(i)];
  }
  prefix_sum(A.ptr);
  assign_touched(A.col, static_cast<size_t>(A.ptr[un]));
  assign_touched(A.val, A.col.size());
#pragma omp parallel for schedule(static, 1)
  for (int32_t b = 0; b < blocks; ++b) {
    for (int32_t i = block_begin(b); i < block_begin(b + 1); ++i) {
      const size_t at = size_t(A.ptr[size_t(i)] + next[size_t(i)]);
      std::copy(U.col.begin() + U.ptr[size_t(i)], U.col.begin() + U.ptr[size_t(i) + 1], A.col.begin() + at);
      std::copy(U.val.begin() + U.ptr[size_t(i)], U.val.begin() + U.ptr[size_t(i) + 1], A.val.begin() + at);
      next[size_t(i)] = A.ptr[size_t(i)];
    }
    for_lower(b, [&](int32_t i, int32_t j, size_t k) {
      const size_t slot = size_t(next[size_t(i)]++);
      A.col[slot] = j;
      A.val[slot] = U.val[k];
    });
  }
  return A;
}

}  // namespace pgsim
