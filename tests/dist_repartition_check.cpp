// Run under mpirun by tests/test_dist_mpi.cpp: the row migration of src/dist/repartition.hpp.
// The system is two separate grids (two nets, as pgsim-gen writes them), its rows first split
// among the ranks unevenly and across the nets (as byte ranges of a netlist fall). Checked:
//   - every row arrives once, at its new index, with its entries (columns renumbered) and b;
//   - the ranks' new shares are balanced (within 10% of rows / P);
//   - at 2 ranks, the partitioner (METIS on the coarse graph, or in a build with PT-Scotch the
//     rows' own graph) separates the nets: no row couples to another rank, and only the rows of
//     the net a rank does not keep move (the parts matched to ranks);
//   - return_values brings every row's value back to its first owner;
//   - the plan (its blocks and their parts) is the same when made again.
// aggregate_rows (src/dist/row_aggregates.hpp), two rounds: every row in one aggregate, each
// aggregate connected through its own rank's couplings and weighted by its rows, the aggregates'
// edges those of the rows between them with their weights summed, at most a quarter as many
// aggregates as rows, and the same aggregates when made again.
// With PT-Scotch, scotch_partition alone: the same parts when called again after Scotch's own
// random generator was moved on, and balanced parts.
// match_parts_to_ranks, on a plan made by hand: parts named in any order go to the ranks holding
// most of their rows.
// At 2 ranks, also two larger nets split evenly at their boundary (as the parse splits
// pgsim-gen's grids), 3 rows a block, the boundary inside a block of the global rows: the plan
// keeps every row where it is (a block never spans two ranks, and the split cuts nothing).
// Prints one line per failed check and "repartition checks passed" at the end; exit 1 on a failure.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <utility>
#include <vector>

#include "dist/partition.hpp"
#include "dist/record_exchange.hpp"
#include "dist/repartition.hpp"
#include "dist/row_aggregates.hpp"
#include "grid_system.hpp"
#ifdef PGSIM_HAVE_PTSCOTCH
#include <ptscotch.h>

#include "dist/scotch_partition.hpp"
#endif

using namespace pgsim;
using namespace pgsim::dist;

namespace {

int failures = 0;

void check(bool ok, const char* what, long long a, long long b) {
  if (ok) return;
  ++failures;
  std::printf("FAIL %s: %lld vs %lld\n", what, a, b);
}

// Two grids of nx x ny crossings (two layers each) and different seeds side by side: a
// block-diagonal G.
test::GridSystem two_nets(int32_t nx, int32_t ny) {
  test::GridShape shape;
  shape.nx = nx;
  shape.ny = ny;
  const test::GridSystem a = test::make_grid_system(shape);
  shape.seed = 2;
  const test::GridSystem b = test::make_grid_system(shape);
  test::GridSystem s;
  s.G.rows = a.G.rows + b.G.rows;
  s.G.ptr = a.G.ptr;
  s.G.col = a.G.col;
  s.G.val = a.G.val;
  for (int32_t i = 0; i < b.G.rows; ++i) {
    for (int32_t k = b.G.ptr[i]; k < b.G.ptr[i + 1]; ++k) {
      s.G.col.push_back(b.G.col[k] + a.G.rows);
      s.G.val.push_back(b.G.val[k]);
    }
    s.G.ptr.push_back(static_cast<int32_t>(s.G.col.size()));
  }
  s.b = a.b;
  s.b.insert(s.b.end(), b.b.begin(), b.b.end());
  return s;
}

// Rank `rank`'s rows of `full`, first split among the ranks at `cut` (per rank + 1).
DistributedRows rows_of(const test::GridSystem& full, const std::vector<int64_t>& cut, int rank) {
  DistributedRows mine;
  mine.first_row = cut[rank];
  mine.global_rows = full.G.rows;
  mine.rows.rows = static_cast<int32_t>(cut[rank + 1] - cut[rank]);
  for (int64_t i = cut[rank]; i < cut[rank + 1]; ++i) {
    for (int32_t k = full.G.ptr[i]; k < full.G.ptr[i + 1]; ++k) {
      mine.rows.col.push_back(full.G.col[k]);
      mine.rows.val.push_back(full.G.val[k]);
    }
    mine.rows.ptr.push_back(static_cast<int32_t>(mine.rows.col.size()));
    mine.b.push_back(full.b[i]);
  }
  return mine;
}

// Migrates `full`, first split among the ranks at `cut`, and checks the above; `kept`: the plan
// must keep every row where it is; `moving` >= 0: the rows that must move, over all ranks.
void check_split(const test::GridSystem& full, const std::vector<int64_t>& cut, bool kept, int64_t moving, int rank,
                 int ranks) {
  const int64_t n = full.G.rows;
  const DistributedRows mine = rows_of(full, cut, rank);

  const RowMigration plan = plan_migration(mine, MPI_COMM_WORLD), again = plan_migration(mine, MPI_COMM_WORLD);
  check(again.old_first_of_block == plan.old_first_of_block && again.part_of_block == plan.part_of_block,
        "the same plan again", 0, 0);
  if (kept) {
    check(plan.keeps_every_row(), "the parse's split kept", 0, 0);
    check(plan.rows_leaving(rank) == 0, "rows leaving a kept split", plan.rows_leaving(rank), 0);
  }
  if (moving >= 0) {
    int64_t leaving = 0;
    for (int r = 0; r < ranks; ++r) leaving += plan.rows_leaving(r);
    check(leaving == moving, "rows moved", leaving, moving);
  }
  const MovedRows moved = migrate(mine, plan, MPI_COMM_WORLD);
  check(moved.first_row() == plan.new_offset[rank], "first row", moved.first_row(), plan.new_offset[rank]);
  check(moved.rows() == plan.new_offset[rank + 1] - plan.new_offset[rank], "rows", moved.rows(),
        plan.new_offset[rank + 1] - plan.new_offset[rank]);
  check(plan.new_offset[ranks] == n, "rows in all", plan.new_offset[ranks], n);
  const double share = double(moved.rows()) * ranks / double(n);
  check(share > 0.9 && share < 1.1, "balanced share (per mille)", static_cast<long long>(share * 1000), 1000);

  // Every old row's new index: a permutation; this rank's new rows hold the old rows' entries,
  // read in order from any row on (the rows that stayed and those received, in pieces).
  std::vector<int64_t> old_of_new(static_cast<size_t>(n), -1);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t k = plan.new_index(i);
    check(k >= 0 && k < n && old_of_new[k] < 0, "new index unique", i, k);
    if (k >= 0 && k < n) old_of_new[k] = i;
  }
  int64_t cut_entries = 0;
  int32_t next = moved.rows() / 3;
  const auto check_row = [&](int32_t k, const int32_t* col, const double* val, int32_t len, double b) {
    check(k == next, "rows in order", k, next);
    ++next;
    const int64_t old = old_of_new[moved.first_row() + k];
    check(b == full.b[old], "b moved", k, old);
    check(len == full.G.ptr[old + 1] - full.G.ptr[old], "row length", k, old);
    for (int32_t e = 0; e + 1 < len; ++e) check(col[e] < col[e + 1], "columns sorted", col[e], col[e + 1]);
    for (int32_t e = 0; e < len; ++e) {
      if (col[e] < moved.first_row() || col[e] >= moved.first_row() + moved.rows()) ++cut_entries;
      // The same entry in the original row, found by the old index of the column.
      bool found = false;
      for (int32_t f = full.G.ptr[old]; f < full.G.ptr[old + 1]; ++f)
        found |= full.G.col[f] == old_of_new[col[e]] && full.G.val[f] == val[e];
      check(found, "entry moved", old, old_of_new[col[e]]);
    }
  };
  moved.for_rows(moved.rows() / 3, moved.rows(), check_row);
  next = 0;
  moved.for_rows(0, moved.rows() / 3, check_row);
  if (ranks == 2) check(cut_entries == 0, "2 ranks: the nets separated (entries across the cut)", cut_entries, 0);

  std::vector<double> ids(static_cast<size_t>(moved.rows()));
  for (int32_t k = 0; k < moved.rows(); ++k) ids[k] = double(old_of_new[moved.first_row() + k]);
  const std::vector<double> back = return_values(ids, plan, MPI_COMM_WORLD);
  check(back.size() == static_cast<size_t>(mine.rows.rows), "values returned", static_cast<long long>(back.size()),
        mine.rows.rows);
  for (size_t i = 0; i < back.size() && i < static_cast<size_t>(mine.rows.rows); ++i)
    check(back[i] == double(mine.first_row + static_cast<int64_t>(i)), "value back at its row",
          static_cast<long long>(back[i]), mine.first_row + static_cast<int64_t>(i));
}

// Three ranks of 4 blocks each (10 rows a block, the last rank's last block 5), parts named as
// METIS might: rank 0's blocks mostly part 2, rank 1's part 0, rank 2's part 1, a block or two
// elsewhere. Each part must go to the rank holding most of its rows, the odd blocks with it.
void check_part_matching() {
  RowMigration plan;
  plan.block_rows = 10;
  plan.old_offset = {0, 40, 80, 115};
  plan.global_rows = 115;
  plan.first_block = {0, 4, 8, 12};
  plan.old_first_of_block = {0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 115};
  std::vector<int32_t> part = {2, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1, 1};
  match_parts_to_ranks(part, plan);
  const std::vector<int32_t> expected = {0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 2};
  for (size_t b = 0; b < part.size(); ++b) check(part[b] == expected[b], "part matched to its rank", part[b], expected[b]);
}

// aggregate_rows on `mine`, a share of `full` (see the header comment).
void check_aggregates(const test::GridSystem& full, const DistributedRows& mine) {
  const AggregateGraph g = aggregate_rows(mine, 2, MPI_COMM_WORLD);
  const AggregateGraph again = aggregate_rows(mine, 2, MPI_COMM_WORLD);
  check(again.aggregate_of_row == g.aggregate_of_row && again.adjacent == g.adjacent && again.weight == g.weight,
        "aggregates: the same when made again", 0, 0);
  const CsrMatrix& m = mine.rows;
  const int32_t n = m.rows;
  const int64_t first = mine.first_row;
  std::vector<std::vector<int32_t>> members(size_t(g.aggregates()));
  for (int32_t i = 0; i < n; ++i) {
    const int32_t a = g.aggregate_of_row[size_t(i)];
    check(a >= 0 && a < g.aggregates(), "aggregates: a row's aggregate in range", a, g.aggregates());
    if (a >= 0 && a < g.aggregates()) members[size_t(a)].push_back(i);
  }
  // Each aggregate non-empty, weighted by its rows, connected through couplings among its rows.
  std::vector<int32_t> seen(size_t(n), -1);
  for (int32_t a = 0; a < g.aggregates(); ++a) {
    const std::vector<int32_t>& rows = members[size_t(a)];
    check(!rows.empty() && g.rows[size_t(a)] == int64_t(rows.size()), "aggregates: weight = rows", g.rows[size_t(a)],
          static_cast<long long>(rows.size()));
    if (rows.empty()) continue;
    std::vector<int32_t> front{rows[0]};
    seen[size_t(rows[0])] = a;
    size_t reached = 1;
    while (!front.empty()) {
      const int32_t i = front.back();
      front.pop_back();
      for (int32_t k = m.ptr[size_t(i)]; k < m.ptr[size_t(i) + 1]; ++k) {
        const int64_t j = m.col[size_t(k)] - first;
        if (j < 0 || j >= n || seen[size_t(j)] == a || g.aggregate_of_row[size_t(j)] != a) continue;
        seen[size_t(j)] = a, ++reached, front.push_back(int32_t(j));
      }
    }
    check(reached == rows.size(), "aggregates: connected", static_cast<long long>(reached),
          static_cast<long long>(rows.size()));
  }
  // Every row's global aggregate (ranks hold consecutive rows in rank order), then this rank's
  // aggregates' edges recomputed from its rows.
  std::vector<int64_t> global(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) global[size_t(i)] = g.first + g.aggregate_of_row[size_t(i)];
  const std::vector<int64_t> all = all_gather(global, MPI_COMM_WORLD);
  double weakest = HUGE_VAL;
  for (int32_t i = 0; i < full.G.rows; ++i)
    for (int32_t k = full.G.ptr[size_t(i)]; k < full.G.ptr[size_t(i) + 1]; ++k)
      if (full.G.col[size_t(k)] != i && full.G.val[size_t(k)] != 0) weakest = std::min(weakest, std::fabs(full.G.val[size_t(k)]));
  std::map<std::pair<int64_t, int64_t>, int64_t> want;
  for (int32_t i = 0; i < n; ++i)
    for (int32_t k = m.ptr[size_t(i)]; k < m.ptr[size_t(i) + 1]; ++k) {
      const int64_t a = all[size_t(first + i)], b = all[size_t(m.col[size_t(k)])];
      if (a != b) want[{a, b}] += coupling_weight(m.val[size_t(k)], weakest);
    }
  std::map<std::pair<int64_t, int64_t>, int64_t> got;
  for (int32_t a = 0; a < g.aggregates(); ++a)
    for (int64_t e = g.ptr[size_t(a)]; e < g.ptr[size_t(a) + 1]; ++e) got[{g.first + a, g.adjacent[size_t(e)]}] = g.weight[size_t(e)];
  check(got == want, "aggregates: their edges and summed weights", static_cast<long long>(got.size()),
        static_cast<long long>(want.size()));
  int64_t counts[2] = {g.aggregates(), n};
  MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  check(4 * counts[0] <= counts[1], "aggregates: at most a quarter of the rows", counts[0], counts[1]);
}

#ifdef PGSIM_HAVE_PTSCOTCH
// scotch_partition on `mine` (dist/scotch_partition.hpp): the same parts again after Scotch's
// global random generator was reseeded and drawn from (as another caller of Scotch would leave
// it: each call seeds a generator of its own), each part within kBalance of the rows' share.
void check_scotch(const DistributedRows& mine, int rank, int ranks) {
  const std::vector<int32_t> parts = scotch_partition(mine, ranks, MPI_COMM_WORLD);
  SCOTCH_randomSeed(SCOTCH_Num(12345 + rank));
  SCOTCH_randomVal(1000);
  check(scotch_partition(mine, ranks, MPI_COMM_WORLD) == parts, "PT-Scotch: the same parts again", 0, 0);
  std::vector<int64_t> rows(static_cast<size_t>(ranks), 0);
  for (int32_t p : parts) {
    check(p >= 0 && p < ranks, "PT-Scotch: a part in range", p, ranks);
    if (p >= 0 && p < ranks) ++rows[size_t(p)];
  }
  MPI_Allreduce(MPI_IN_PLACE, rows.data(), ranks, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  const double share = double(mine.global_rows) / ranks;
  for (int64_t r : rows) check(double(r) <= kBalance * share + 1, "PT-Scotch: a part within the balance", r, int64_t(share));
}
#endif

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  check_part_matching();
  {
    const test::GridSystem full = two_nets(40, 30);
    const int64_t n = full.G.rows;
    // Uneven first shares: rank r's cut at (r / P)^0.7 of the rows (rank 0 takes the most).
    std::vector<int64_t> cut(static_cast<size_t>(ranks) + 1);
    for (int r = 0; r <= ranks; ++r) cut[r] = static_cast<int64_t>(double(n) * std::pow(double(r) / ranks, 0.7));
    cut[ranks] = n;
    // At 2 ranks rank 0 holds a net and some of the other's rows: those alone move.
    check_split(full, cut, false, ranks == 2 ? cut[1] - n / 2 : -1, rank, ranks);
    check_aggregates(full, rows_of(full, cut, rank));
#ifdef PGSIM_HAVE_PTSCOTCH
    check_scotch(rows_of(full, cut, rank), rank, ranks);
#endif
  }
  if (ranks == 2) {
    // 2 x 8,282 rows: 3 rows a block (2 x 4096 blocks at most), the nets' boundary at row 8,282
    // inside the global rows' block [8,280, 8,283).
    const test::GridSystem full = two_nets(41, 101);
    const int64_t half = full.G.rows / 2;
    check_split(full, {0, half, 2 * half}, true, 0, rank, ranks);
  }
  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0 && all == 0) std::printf("repartition checks passed on %d ranks\n", ranks);
  MPI_Finalize();
  return all == 0 ? 0 : 1;
}
