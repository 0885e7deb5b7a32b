#include "mna/packed_symmetric.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "mna/fixed_order_sum.hpp"
#include "mna/prefix_sum.hpp"
#include "mna/touched_vector.hpp"

namespace pgsim {
namespace {

// splitmix64's finaliser: every input bit reaches every output bit.
uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// The hash of the pair {lo, hi} (lo < hi) holding v, the same from either of its two entries:
// its position times an odd constant (distinct positions stay distinct) plus v's bits, mixed.
uint64_t pair_hash(int32_t lo, int32_t hi, double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return mix(((uint64_t(uint32_t(lo)) << 32) | uint32_t(hi)) * 0x9e3779b97f4a7c15ULL + bits);
}

// Rows per block of the residual's sweep, at least: fewer rows than this run on fewer threads.
constexpr int32_t kMinSweepRows = 4096;

// A term of row i that its block's sweep met in a later block's row j: G_ij = v.
struct LateTerm {
  int32_t i, j;
  double v;
};

}  // namespace

std::optional<PackedSymmetric> pack_symmetric(const CsrMatrix& G) {
  const int32_t n = G.rows;
  PackedSymmetric P;
  P.rows = n;
  size_for_overwrite(P.ptr, size_t(n) + 1);  // row lengths, then their offsets
  P.ptr[0] = 0;
  size_for_overwrite(P.diag, size_t(n));
  bool ok = true;
  int64_t right = 0;  // entries right of the diagonal: as many as left of it when each is a mirror
#pragma omp parallel for schedule(static, 4096) reduction(&& : ok) reduction(+ : right)
  for (int32_t i = 0; i < n; ++i) {
    const int32_t first = G.ptr[size_t(i)], last = G.ptr[size_t(i) + 1];
    bool row_ok = first < last && G.col[size_t(first)] >= 0 && G.col[size_t(last) - 1] < n;
    for (int32_t k = first + 1; k < last && row_ok; ++k) row_ok = G.col[size_t(k) - 1] < G.col[size_t(k)];
    const int32_t at = int32_t(std::lower_bound(G.col.begin() + first, G.col.begin() + last, i) - G.col.begin());
    row_ok = row_ok && at < last && G.col[size_t(at)] == i;
    P.ptr[size_t(i) + 1] = at - first;
    right += last - at - 1;
    ok = ok && row_ok;
  }
  if (!ok) return std::nullopt;
  prefix_sum(P.ptr);
  if (right != int64_t(P.ptr[size_t(n)])) return std::nullopt;
  size_for_overwrite(P.col, size_t(P.ptr[size_t(n)]));
  size_for_overwrite(P.val, P.col.size());
  uint64_t left_hash = 0, right_hash = 0;  // sums modulo 2^64: the same for any order
#pragma omp parallel for schedule(static, 4096) reduction(+ : left_hash, right_hash)
  for (int32_t i = 0; i < n; ++i) {
    const int32_t first = G.ptr[size_t(i)], left = P.ptr[size_t(i) + 1] - P.ptr[size_t(i)];
    for (int32_t k = 0; k < left; ++k) {
      const size_t from = size_t(first + k), to = size_t(P.ptr[size_t(i)] + k);
      P.col[to] = G.col[from];
      P.val[to] = G.val[from];
      left_hash += pair_hash(G.col[from], i, G.val[from]);
    }
    P.diag[size_t(i)] = G.val[size_t(first + left)];
    for (int32_t k = first + left + 1; k < G.ptr[size_t(i) + 1]; ++k) right_hash += pair_hash(i, G.col[size_t(k)], G.val[size_t(k)]);
  }
  if (left_hash != right_hash) return std::nullopt;
  return P;
}

double relative_residual(const PackedSymmetric& P, const std::vector<double>& b, const std::vector<double>& x) {
  const double bnorm = std::sqrt(fixed_order_sum(int64_t(b.size()), [&](int64_t i) { return b[size_t(i)] * b[size_t(i)]; }));
  if (bnorm == 0) return 0.0;
  const int32_t n = P.rows;
  // Row i of G is its left entries, its diagonal, then G_ij = G_ji for j > i, ascending: row j's
  // left entry i. One sweep over the rows in order finishes row j's left part and diagonal, then
  // subtracts row j's left entries from their rows i < j, each of which so gets its right terms in
  // G's order. In parallel: contiguous blocks swept at once, the terms a block meets for an
  // earlier block's rows kept, then subtracted block by block (ascending j again). Any blocks give
  // every row the same operations in the same order: the result does not depend on the threads.
  const int32_t blocks = std::max(1, std::min(omp_get_max_threads(), n / kMinSweepRows));
  auto block_start = [n, blocks](int32_t B) { return int32_t(int64_t(n) * B / blocks); };
  auto block_of = [&block_start](int32_t i, int32_t below) {  // i's block, of those before `below`
    int32_t D = below - 1;
    while (block_start(D) > i) --D;
    return D;
  };
  // late[B][D]: the terms block B's sweep met for block D < B's rows, in sweep order.
  const auto nb = static_cast<size_t>(blocks);
  std::vector<std::vector<std::vector<LateTerm>>> late(nb, std::vector<std::vector<LateTerm>>(nb));
  FillVector<double> r;
  size_for_overwrite(r, size_t(n));  // every row's written by its block's sweep
#pragma omp parallel for schedule(static, 1) num_threads(blocks)
  for (int32_t B = 0; B < blocks; ++B) {
    const int32_t lo = block_start(B);
    for (int32_t j = lo; j < block_start(B + 1); ++j) {
      const double xj = x[size_t(j)];
      double t = b[size_t(j)];
      for (int32_t k = P.ptr[size_t(j)]; k < P.ptr[size_t(j) + 1]; ++k) t -= P.val[size_t(k)] * x[size_t(P.col[size_t(k)])];
      t -= P.diag[size_t(j)] * xj;
      r[size_t(j)] = t;
      for (int32_t k = P.ptr[size_t(j)]; k < P.ptr[size_t(j) + 1]; ++k) {
        const int32_t i = P.col[size_t(k)];
        if (i >= lo) {
          r[size_t(i)] -= P.val[size_t(k)] * xj;
        } else {
          late[size_t(B)][size_t(block_of(i, B))].push_back({i, j, P.val[size_t(k)]});
        }
      }
    }
  }
#pragma omp parallel for schedule(static, 1) num_threads(blocks)
  for (int32_t D = 0; D < blocks; ++D)
    for (int32_t B = D + 1; B < blocks; ++B)
      for (const LateTerm& t : late[size_t(B)][size_t(D)]) r[size_t(t.i)] -= t.v * x[size_t(t.j)];
  const double rr = fixed_order_sum(n, [&](int64_t i) { return r[size_t(i)] * r[size_t(i)]; });
  return std::sqrt(rr) / bnorm;
}

}  // namespace pgsim
