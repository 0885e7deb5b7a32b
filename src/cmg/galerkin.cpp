#include "cmg/galerkin.hpp"

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

#include <omp.h>

#include "cmg/counting_sort.hpp"
#include "cmg/level_rows.hpp"
#include "cmg/row_schedule.hpp"
#include "mna/per_thread.hpp"
#include "mna/prefix_sum.hpp"
#include "mna/touched_vector.hpp"
#include "parser/default_init.hpp"

namespace pgsim {
namespace {

// Rows ahead whose scattered source rows are prefetched (permute_symmetric).
constexpr int32_t kRowsAhead = 16;

// Row c's diagonal made the negated sum of its off-diagonals, summed in column order: every row
// of the level sums to zero (up to the rounding of that sum). Each row's sum is one thread's, in
// one order.
void make_zero_row_sum(CsrMatrix& A, int32_t c) {
  double off_sum = 0;
  int32_t diag_at = -1;
  for (int32_t k = A.ptr[c]; k < A.ptr[c + 1]; ++k) {
    if (A.col[k] == c)
      diag_at = k;
    else
      off_sum += A.val[k];
  }
  A.val[diag_at] = -off_sum;
}

// galerkin_coarse of a stored level or of level 0 read from G: the same rows in the same order,
// so the same coarse level.
template <class Level>
CsrMatrix coarse_level(const Level& A, const FillVector<int32_t>& cluster_of, int32_t clusters) {
  const int32_t rows = level_rows(A);
  const size_t nc = static_cast<size_t>(clusters);
  // Members of each cluster in increasing order and an upper bound of each coarse row's length.
  FillVector<int32_t> member_ptr, rank;
  counting_sort(cluster_of, clusters, member_ptr, rank);
  FillVector<int32_t> members(static_cast<size_t>(rows));  // unwritten until the loop below
#pragma omp parallel for schedule(static, 4096)
  for (int32_t v = 0; v < rows; ++v) members[rank[v]] = v;
  FillVector<int32_t> bound(nc + 1);  // bound[c + 1] written for every cluster c below
  bound[0] = 0;
#pragma omp parallel for schedule(static, 4096)
  for (int32_t c = 0; c < clusters; ++c) {
    int32_t entries = 0;
    for (int32_t m = member_ptr[c]; m < member_ptr[c + 1]; ++m) entries += row_bound(A, members[m]);
    bound[c + 1] = entries;
  }
  prefix_sum(bound);

  // Each coarse row gathered at the end of its thread's merged rows, sorted, its duplicates merged
  // in place, and the rest cut off; then copied into A_c in row order. Only merged rows are held,
  // as large as A_c together, where a scratch as large as A's entries held every gathered row
  // before (on level 0 that scratch and the fine Laplacian were the hierarchy build's peak). A row
  // is gathered where it stays, not in a scratch row and then copied to the merged ones.
  const size_t threads = static_cast<size_t>(omp_get_max_threads());
  // Each grown row by row by its thread: headers on lines of their own (mna/per_thread.hpp).
  PerThread<FillVector<int32_t>> merged_col(threads);
  PerThread<FillVector<double>> merged_val(threads);
  // Twice a thread's share of the gathered entries (an upper bound of the merged ones, with the
  // diagonals): address space only until written, and room enough that a thread's rows are not
  // moved to grow unless the schedule gives it far more than its share (then they are, correctly).
  const size_t share = 2 * ((static_cast<size_t>(bound[nc]) + nc) / threads + 1);
  for (size_t t = 0; t < threads; ++t) {
    merged_col[t].value.reserve(share);
    merged_val[t].value.reserve(share);
  }
  // Row c's merged entries: at merged_*[place[c] >> kOffsetBits][place[c] & offset mask].
  constexpr unsigned kOffsetBits = 40;
  FillVector<uint64_t> place(nc);  // written for every cluster below
  FillVector<int32_t> length(nc + 1);  // length[c + 1] written for every cluster c below
  length[0] = 0;
  // The hub's row (the ground vertex's cluster) first, beside the others: its gather and sort
  // are a thread's work for tens of milliseconds on large grids.
  auto gathered = [&bound](int32_t c) { return bound[c + 1] - bound[c]; };
  for_each_row_long_first(clusters, gathered, [&](int32_t c) {
    const size_t t = static_cast<size_t>(omp_get_thread_num());
    FillVector<int32_t>& mcol = merged_col[t].value;
    FillVector<double>& mval = merged_val[t].value;
    const size_t row_at = mcol.size();
    const size_t room = static_cast<size_t>(gathered(c)) + 1;  // the gathered entries and the diagonal
    mcol.resize(row_at + room);  // unwritten room (FillVectors), cut to the merged row below
    mval.resize(row_at + room);
    int32_t* col = mcol.data() + row_at;
    double* val = mval.data() + row_at;
    int32_t len = 0;
    for (int32_t m = member_ptr[c]; m < member_ptr[c + 1]; ++m) {
      for_each_off_diagonal(A, members[m], [&](int32_t u, double a) {
        const int32_t cu = cluster_of[u];
        if (cu == c) return;  // intra-cluster entries: the diagonal is rebuilt below
        col[len] = cu;
        val[len] = a;
        ++len;
      });
    }
    // Stable: equal columns are summed in the order gathered (members ascending, each member's
    // columns ascending), the order the device's product sums them in too (gpu/cmg_coarsen.hpp).
    // The hub's cluster gathers a column up to 17 times on a 5M-node grid's levels.
    sort_row(col, val, len);
    int32_t out = 0;
    for (int32_t k = 0; k < len; ++k) {
      if (out > 0 && col[out - 1] == col[k]) {
        val[out - 1] += val[k];
      } else {
        col[out] = col[k];
        val[out] = val[k];
        ++out;
      }
    }
    // The diagonal, in its sorted place; its value is made by make_zero_row_sum.
    int32_t at = out;
    while (at > 0 && col[at - 1] > c) {
      col[at] = col[at - 1];
      val[at] = val[at - 1];
      --at;
    }
    col[at] = c;
    val[at] = 0;
    place[c] = (uint64_t(t) << kOffsetBits) | row_at;
    mcol.resize(row_at + size_t(out) + 1);
    mval.resize(row_at + size_t(out) + 1);
    length[c + 1] = out + 1;
  });
  // Only the merged rows are read from here on: what gathered them is freed before A_c is made.
  for (FillVector<int32_t>* v : {&member_ptr, &rank, &members, &bound}) FillVector<int32_t>().swap(*v);

  CsrMatrix Ac;
  Ac.rows = clusters;
  prefix_sum(length);
  Ac.ptr = std::move(length);
  Ac.col.resize(static_cast<size_t>(Ac.ptr[nc]));  // unwritten: every row copied in below
  Ac.val.resize(Ac.col.size());
  // Entries (c, d) and (d, c) were summed in different orders and may differ in the last bit: the
  // level is made exactly symmetric by taking every lower entry (c, d), d < c, from the upper
  // part of row d's merged copy, in the same pass that copies the rows into A_c (where a second
  // pass over A_c looked it up in A_c's row d). By pieces of entries: a hub row's lookups (a
  // third of the level's cache misses) are spread over the threads. A row that one piece holds
  // whole gets its diagonal there, while it is in cache (make_zero_row_sum), where a pass over
  // A_c after this one made them all; the rows split over pieces get theirs after.
  const uint64_t offset_mask = (uint64_t(1) << kOffsetBits) - 1;
  auto merged_col_of = [&](int32_t c) { return merged_col[place[c] >> kOffsetBits].value.data() + (place[c] & offset_mask); };
  auto merged_val_of = [&](int32_t c) { return merged_val[place[c] >> kOffsetBits].value.data() + (place[c] & offset_mask); };
  for_each_entry_piece(Ac.ptr, [&](int32_t c, int32_t begin, int32_t end) {
    const int32_t* from_col = merged_col_of(c) + (begin - Ac.ptr[c]);
    const double* from_val = merged_val_of(c) + (begin - Ac.ptr[c]);
    for (int32_t k = begin; k < end; ++k, ++from_col, ++from_val) {
      const int32_t d = *from_col;
      Ac.col[k] = d;
      if (d < c) {
        const int32_t* row = merged_col_of(d);
        Ac.val[k] = merged_val_of(d)[std::lower_bound(row, row + (Ac.ptr[d + 1] - Ac.ptr[d]), c) - row];
      } else {
        Ac.val[k] = *from_val;
      }
    }
    if (whole_row(Ac.ptr, c, begin, end)) make_zero_row_sum(Ac, c);
  });
  for_each_split_row(Ac.ptr, [&Ac](int32_t c) { make_zero_row_sum(Ac, c); });
  return Ac;
}

}  // namespace

CsrMatrix galerkin_coarse(const CsrMatrix& A, const FillVector<int32_t>& cluster_of, int32_t clusters) {
  return coarse_level(A, cluster_of, clusters);
}

CsrMatrix galerkin_coarse(const GroundedSdd& L, const FillVector<int32_t>& cluster_of, int32_t clusters) {
  return coarse_level(L, cluster_of, clusters);
}

CsrMatrix permute_symmetric(CsrMatrix A, const std::vector<int32_t>& new_of_old, std::vector<double>* diagonal) {
  const size_t n = static_cast<size_t>(A.rows);
  FillVector<int32_t> old_of_new(n);  // unwritten until the loop below
#pragma omp parallel for schedule(static, 4096)
  for (int32_t i = 0; i < A.rows; ++i) old_of_new[new_of_old[i]] = i;
  // B's arrays are sized unwritten (FillVectors) and every element is written below, on all
  // threads, which also fault their pages in.
  CsrMatrix B;
  B.rows = A.rows;
  B.ptr.resize(A.ptr.size());
  B.col.resize(A.col.size());
  B.val.resize(A.val.size());
  B.ptr[0] = 0;
#pragma omp parallel for schedule(static, 4096)
  for (int32_t r = 0; r < B.rows; ++r) {
    const int32_t i = old_of_new[r];
    B.ptr[r + 1] = A.ptr[i + 1] - A.ptr[i];
  }
  prefix_sum(B.ptr);
  // Zeros (a std::vector): a row that stores no diagonal leaves its 0.
  if (diagonal) size_for_overwrite(*diagonal, n);
  // Row r of B is row old_of_new[r] of A, its columns renumbered, sorted (a row's columns are
  // distinct) and its diagonal taken, in one pass while the row is in cache, where a pass of
  // pieces copied the rows and a second pass over B sorted them. Rows long first: a hub row's
  // copy and sort run on one thread beside the short rows, not after them. Row r's source is at
  // a random place: its lines are requested kRowsAhead rows before they are read (its row offset
  // twice as far ahead), as in the renumbered Laplacian (cmg/laplacian.cpp), so a thread waits
  // for several rows' misses at once.
  for_each_row_long_first(
      B.rows, [&B](int32_t r) { return B.ptr[r + 1] - B.ptr[r]; },
      [&](int32_t r) {
        if (r + 2 * kRowsAhead < B.rows) __builtin_prefetch(&A.ptr[old_of_new[r + 2 * kRowsAhead]]);
        if (r + kRowsAhead < B.rows) {
          const size_t at = size_t(A.ptr[old_of_new[r + kRowsAhead]]);
          __builtin_prefetch(A.col.data() + at);
          __builtin_prefetch(A.val.data() + at);
        }
        const int32_t begin = B.ptr[r], end = B.ptr[r + 1];
        const int32_t shift = A.ptr[old_of_new[r]] - begin;
        for (int32_t out = begin; out < end; ++out) {
          B.col[out] = new_of_old[A.col[out + shift]];
          B.val[out] = A.val[out + shift];
        }
        sort_row(B.col.data() + begin, B.val.data() + begin, end - begin);
        if (diagonal)
          for (int32_t out = begin; out < end; ++out)
            if (B.col[out] == r) (*diagonal)[size_t(r)] = B.val[out];
      });
  return B;
}

}  // namespace pgsim
