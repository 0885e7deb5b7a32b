#include "dist/coarse_operators.hpp"

#include <omp.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "mna/touched_vector.hpp"
#include "pcg/triangular.hpp"

namespace pgsim::dist {
namespace {

// Row i's (global coarse unknown, G_ij) pairs over its own and halo columns, sorted by
// unknown, then value (the order they are summed in).
void gather_row(const RankBlock& block, const std::vector<int32_t>& own, const std::vector<int32_t>& halo, int32_t i,
                std::vector<std::pair<int32_t, double>>& row) {
  const CsrMatrix& A = block.interior;
  const CsrMatrix& B = block.boundary;
  row.clear();
  for (int32_t k = A.ptr[i]; k < A.ptr[i + 1]; ++k)
    if (own[A.col[k]] >= 0) row.emplace_back(own[A.col[k]], A.val[k]);
  const auto at = std::lower_bound(block.boundary_rows.begin(), block.boundary_rows.end(), i);
  if (at != block.boundary_rows.end() && *at == i) {
    const auto kb = static_cast<int32_t>(at - block.boundary_rows.begin());
    for (int32_t k = B.ptr[kb]; k < B.ptr[kb + 1]; ++k)
      if (halo[B.col[k]] >= 0) row.emplace_back(halo[B.col[k]], B.val[k]);
  }
  std::sort(row.begin(), row.end());
}

// Row i's sum at its own unknown u when i is no boundary row and every coupling of i to a coarse
// unknown is to u (all but a few rows: those inside one aggregate): true, with `sum` what
// gather_row and for_each_sum give (the values sorted, summed in that order), without their pairs
// (a row of one unknown sorts by value alone). False for any other row, `sum` untouched.
bool sum_inside(const RankBlock& block, const std::vector<int32_t>& own, int32_t i, std::vector<double>& values,
                double& sum) {
  const CsrMatrix& A = block.interior;
  const int32_t u = own[i];
  values.clear();
  for (int32_t k = A.ptr[i]; k < A.ptr[i + 1]; ++k) {
    const int32_t c = own[A.col[k]];
    if (c < 0) continue;
    if (c != u) return false;
    values.push_back(A.val[k]);
  }
  if (std::binary_search(block.boundary_rows.begin(), block.boundary_rows.end(), i)) return false;
  std::sort(values.begin(), values.end());
  double s = 0;
  if (!values.empty()) {
    s = values[0];
    for (size_t k = 1; k < values.size(); ++k) s += values[k];
  }
  sum = s;
  return true;
}

// Calls f(unknown, sum) for each distinct unknown of a gathered row, ascending.
template <class F>
void for_each_sum(const std::vector<std::pair<int32_t, double>>& row, F&& f) {
  for (size_t k = 0; k < row.size();) {
    double s = row[k].second;
    size_t e = k + 1;
    for (; e < row.size() && row[e].first == row[k].first; ++e) s += row[e].second;
    f(row[k].first, s);
    k = e;
  }
}

// Z^T as index lists: the rows of each own position (key[i] in [0, count), or -1), ascending.
// A counting sort on all threads (a rank's rows: 10M at 50M nodes on 2 ranks, and few positions):
// thread t counts, then places, the t-th contiguous range of rows, after the rows of the
// threads before it for each position.
void members_of(const std::vector<int32_t>& key, int32_t count, std::vector<int32_t>& ptr,
                std::vector<int32_t>& members) {
  const int threads = std::max(1, omp_get_max_threads());
  const size_t n = key.size(), positions = size_t(count);
  std::vector<int32_t> at(size_t(threads) * positions, 0);  // [thread][position]: a count, then where it writes
  const auto range = [&](int t) { return std::pair<size_t, size_t>(n * size_t(t) / size_t(threads), n * size_t(t + 1) / size_t(threads)); };
#pragma omp parallel num_threads(threads)
  {
    const auto [b, e] = range(omp_get_thread_num());
    int32_t* mine = &at[size_t(omp_get_thread_num()) * positions];
    for (size_t i = b; i < e; ++i)
      if (key[i] >= 0) ++mine[key[i]];
  }
  ptr.assign(positions + 1, 0);
  int32_t place = 0;
  for (size_t p = 0; p < positions; ++p) {
    ptr[p] = place;
    for (size_t t = 0; t < size_t(threads); ++t) {
      const int32_t c = at[t * positions + p];
      at[t * positions + p] = place;
      place += c;
    }
  }
  ptr[positions] = place;
  size_for_overwrite(members, size_t(place));
#pragma omp parallel num_threads(threads)
  {
    const auto [b, e] = range(omp_get_thread_num());
    int32_t* mine = &at[size_t(omp_get_thread_num()) * positions];
    for (size_t i = b; i < e; ++i)
      if (key[i] >= 0) members[size_t(mine[key[i]]++)] = int32_t(i);
  }
}

}  // namespace

CoarseOperators build_coarse_operators(const RankBlock& block, const std::vector<int32_t>& unknown_of_row,
                                       const std::vector<int32_t>& halo_unknown, int32_t first, int32_t count,
                                       int32_t unknowns) {
  CoarseOperators op;
  op.unknowns = unknowns;
  op.first = first;
  op.count = count;
  const int32_t n = block.rows();
  // Each row's sum at its own unknown, and how many other unknowns it reaches.
  std::vector<int32_t> others;
  size_for_overwrite(others, size_t(n));  // every entry written below: pages faulted in by all threads
  size_for_overwrite(op.own_coupling, size_t(n));
#pragma omp parallel
  {
    std::vector<std::pair<int32_t, double>> row;
    std::vector<double> values;
#pragma omp for schedule(static, 4096)
    for (int32_t i = 0; i < n; ++i) {
      double own = 0;
      if (sum_inside(block, unknown_of_row, i, values, own)) {
        op.own_coupling[i] = own;
        others[i] = 0;
        continue;
      }
      gather_row(block, unknown_of_row, halo_unknown, i, row);
      int32_t other = 0;
      for_each_sum(row, [&](int32_t c, double s) {
        if (c == unknown_of_row[i]) own = s;
        else ++other;
      });
      op.own_coupling[i] = own;
      others[i] = other;
    }
  }
  // The rows reaching other unknowns, ascending: each thread collects those of its range (static
  // schedule: ranges in thread order), joined in thread order.
  std::vector<std::vector<int32_t>> rest_of_thread(static_cast<size_t>(omp_get_max_threads()));
#pragma omp parallel
  {
    std::vector<int32_t>& mine = rest_of_thread[size_t(omp_get_thread_num())];
#pragma omp for schedule(static) nowait
    for (int32_t i = 0; i < n; ++i)
      if (others[i] > 0) mine.push_back(i);
  }
  for (const std::vector<int32_t>& mine : rest_of_thread) op.rest_rows.insert(op.rest_rows.end(), mine.begin(), mine.end());
  CsrMatrix& R = op.rest;  // columns global unknowns first, positions below
  R.rows = static_cast<int32_t>(op.rest_rows.size());
  R.ptr.assign(size_t(R.rows) + 1, 0);
  for (int32_t k = 0; k < R.rows; ++k) R.ptr[k + 1] = R.ptr[k] + others[op.rest_rows[k]];
  size_for_overwrite(R.col, size_t(R.ptr[R.rows]));
  size_for_overwrite(R.val, R.col.size());
#pragma omp parallel
  {
    std::vector<std::pair<int32_t, double>> row;
#pragma omp for schedule(static, 256)
    for (int32_t k = 0; k < R.rows; ++k) {
      const int32_t i = op.rest_rows[k];
      gather_row(block, unknown_of_row, halo_unknown, i, row);
      int32_t at = R.ptr[k];
      for_each_sum(row, [&](int32_t c, double s) {
        if (c != unknown_of_row[i]) R.col[at] = c, R.val[at++] = s;
      });
    }
  }
  // rest^T (global unknowns), each row's local rows ascending.
  op.rest_transposed = transpose(R, unknowns);
  for (auto& k : op.rest_transposed.col) k = op.rest_rows[k];

  // Positions: own unknowns, then the others rest reaches, ascending, each once (-1: not yet
  // seen, -2: reached, numbered below).
  std::vector<int32_t> position(static_cast<size_t>(unknowns), -1);
  op.read.resize(size_t(count));
  for (int32_t p = 0; p < count; ++p) op.read[p] = first + p, position[first + p] = p;
  std::vector<int32_t> reached;
  for (const int32_t c : R.col)
    if (position[c] == -1) position[c] = -2, reached.push_back(c);
  std::sort(reached.begin(), reached.end());
  for (const int32_t c : reached) position[c] = static_cast<int32_t>(op.read.size()), op.read.push_back(c);
  for (int32_t k = 0; k < R.rows; ++k) {
    for (int32_t e = R.ptr[k]; e < R.ptr[k + 1]; ++e) R.col[e] = position[R.col[e]];
    sort_row(&R.col[R.ptr[k]], &R.val[R.ptr[k]], R.ptr[k + 1] - R.ptr[k]);
  }

  size_for_overwrite(op.position_of_row, size_t(n));
#pragma omp parallel for schedule(static, 65536)
  for (int32_t i = 0; i < n; ++i) op.position_of_row[i] = unknown_of_row[i] >= 0 ? unknown_of_row[i] - first : -1;
  members_of(op.position_of_row, count, op.member_ptr, op.members);
  return op;
}


size_t CoarseOperators::bytes() const {
  const auto csr = [](const CsrMatrix& A) {
    return A.ptr.size() * sizeof(int32_t) + A.col.size() * sizeof(int32_t) + A.val.size() * sizeof(double);
  };
  return (read.size() + position_of_row.size() + member_ptr.size() + members.size() + rest_rows.size()) *
             sizeof(int32_t) +
         own_coupling.size() * sizeof(double) + csr(rest) + csr(rest_transposed);
}

void own_sums(const CoarseOperators& op, const double* x, bool weighted, double* out) {
#pragma omp parallel for schedule(dynamic, 16)
  for (int32_t p = 0; p < op.count; ++p) {
    double s = 0;
    for (int32_t k = op.member_ptr[p]; k < op.member_ptr[p + 1]; ++k) {
      const int32_t i = op.members[k];
      s += weighted ? op.own_coupling[i] * x[i] : x[i];
    }
    out[p] = s;
  }
}

void subtract_gz(const CoarseOperators& op, const double* r, const double* y, double* u) {
  const int32_t n = op.rows();
#pragma omp parallel for schedule(static, 4096)
  for (int32_t i = 0; i < n; ++i) {
    const int32_t p = op.position_of_row[i];
    u[i] = p >= 0 ? r[i] - op.own_coupling[i] * y[p] : r[i];
  }
  const CsrMatrix& R = op.rest;
#pragma omp parallel for schedule(static, 4096)
  for (int32_t k = 0; k < R.rows; ++k) {
    double s = 0;
    for (int32_t e = R.ptr[k]; e < R.ptr[k + 1]; ++e) s += R.val[e] * y[R.col[e]];
    u[op.rest_rows[k]] -= s;
  }
}

void gz_transposed_times(const CoarseOperators& op, const double* z, double* c) {
  op.rest_transposed.multiply(z, c);
  std::vector<double> own(static_cast<size_t>(op.count));
  own_sums(op, z, true, own.data());
  for (int32_t p = 0; p < op.count; ++p) c[op.first + p] += own[p];
}

void add_coarse(const CoarseOperators& op, const double* y1, const double* y2, double* z) {
  const int32_t n = op.rows();
#pragma omp parallel for schedule(static, 4096)
  for (int32_t i = 0; i < n; ++i)
    if (const int32_t p = op.position_of_row[i]; p >= 0) z[i] += y1[p] - y2[p];
}

}  // namespace pgsim::dist
