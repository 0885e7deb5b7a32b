#include "dist/repartition.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "dist/partition.hpp"
#include "dist/record_exchange.hpp"
#ifdef PGSIM_HAVE_PTSCOTCH
#include "dist/scotch_partition.hpp"
#endif
#include "mna/prefix_sum.hpp"
#include "mna/touched_vector.hpp"

namespace pgsim::dist {
namespace {

// Coarse vertices per rank: enough for METIS to find a good cut, few enough to gather on one rank.
constexpr int64_t kBlocksPerRank = 4096;

int comm_size(MPI_Comm comm) {
  int p = 1;
  MPI_Comm_size(comm, &p);
  return p;
}

int comm_rank(MPI_Comm comm) {
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}

#ifndef PGSIM_HAVE_PTSCOTCH
struct CoarseEdge {
  int64_t from, to;
  double weight;  // summed |G_ij| over the rows of block `from` and the columns of block `to`
};

// The coarse edges of this rank's rows: per block, its entries' column blocks sorted and summed.
std::vector<CoarseEdge> coarse_edges(const DistributedRows& mine, const RowMigration& plan, int me) {
  const int64_t first_block = plan.first_block[size_t(me)], last_block = plan.first_block[size_t(me) + 1];
  std::vector<std::vector<CoarseEdge>> per_block(static_cast<size_t>(last_block - first_block));
#pragma omp parallel for schedule(dynamic, 8)
  for (int64_t blk = first_block; blk < last_block; ++blk) {
    const int64_t lo = plan.old_first_of_block[size_t(blk)] - mine.first_row,
                  hi = plan.old_first_of_block[size_t(blk) + 1] - mine.first_row;
    std::vector<CoarseEdge>& edges = per_block[static_cast<size_t>(blk - first_block)];
    for (int64_t i = lo; i < hi; ++i)
      for (int32_t k = mine.rows.ptr[i]; k < mine.rows.ptr[i + 1]; ++k) {
        const int64_t to = plan.block_of(mine.rows.col[k]);
        if (to != blk) edges.push_back({blk, to, std::fabs(mine.rows.val[k])});
      }
    std::sort(edges.begin(), edges.end(), [](const CoarseEdge& a, const CoarseEdge& b) { return a.to < b.to; });
    size_t kept = 0;  // entries of one column block summed in column order: the same sum on every run
    for (size_t e = 0; e < edges.size(); ++e) {
      if (kept > 0 && edges[kept - 1].to == edges[e].to)
        edges[kept - 1].weight += edges[e].weight;
      else
        edges[kept++] = edges[e];
    }
    edges.resize(kept);
  }
  std::vector<CoarseEdge> all;
  for (const auto& edges : per_block) all.insert(all.end(), edges.begin(), edges.end());
  return all;
}

// Rank 0: the coarse graph as a symmetric matrix (partition_rows reads its off-diagonal weights).
// Each block's edges come from the one rank that holds it, already summed per column block.
CsrMatrix coarse_matrix(std::vector<CoarseEdge> edges, int64_t blocks) {
  std::sort(edges.begin(), edges.end(), [](const CoarseEdge& a, const CoarseEdge& b) {
    return a.from != b.from ? a.from < b.from : a.to < b.to;
  });
  CsrMatrix c;
  c.rows = static_cast<int32_t>(blocks);
  c.ptr.assign(static_cast<size_t>(blocks) + 1, 0);
  for (const CoarseEdge& e : edges) {
    c.col.push_back(static_cast<int32_t>(e.to));
    c.val.push_back(-e.weight);
    ++c.ptr[e.from + 1];
  }
  for (int64_t b = 0; b < blocks; ++b) c.ptr[b + 1] += c.ptr[b];
  return c;
}

// The summed weight of the coarse edges that `part` cuts.
double cut_weight(const CsrMatrix& c, const std::vector<int32_t>& part) {
  double cut = 0;
  for (int32_t b = 0; b < c.rows; ++b)
    for (int32_t k = c.ptr[b]; k < c.ptr[b + 1]; ++k)
      if (part[size_t(b)] != part[size_t(c.col[k])]) cut -= c.val[k];
  return cut;
}

#endif  // PGSIM_HAVE_PTSCOTCH

// Each block on the rank that holds it: the parse's split.
std::vector<int32_t> kept_parts(const RowMigration& plan) {
  std::vector<int32_t> kept(size_t(plan.first_block.back()));
  for (size_t r = 0; r + 1 < plan.first_block.size(); ++r)
    std::fill(kept.begin() + plan.first_block[r], kept.begin() + plan.first_block[r + 1], int32_t(r));
  return kept;
}

// Whether the parse's split is within METIS's balance (kBalance).
bool kept_split_balanced(const RowMigration& plan) {
  int64_t largest = 0;
  for (size_t r = 0; r + 1 < plan.old_offset.size(); ++r) largest = std::max(largest, plan.old_offset[r + 1] - plan.old_offset[r]);
  return double(largest) <= kBalance * double(plan.global_rows) / double(plan.old_offset.size() - 1);
}

// Collective: whether any rank's rows couple to another rank's.
bool cut_anywhere(const DistributedRows& mine, MPI_Comm comm) {
  int cut = couples_elsewhere(mine) ? 1 : 0, anywhere = 0;
  MPI_Allreduce(&cut, &anywhere, 1, MPI_INT, MPI_MAX, comm);
  return anywhere != 0;
}

// Each rank's rows cut into blocks of block_rows from its first (the rank's last block may be
// shorter).
void cut_into_blocks(RowMigration& plan, int P) {
  const auto parts = static_cast<size_t>(P);
  plan.block_rows = std::max<int64_t>(1, (plan.global_rows + P * kBlocksPerRank - 1) / (P * kBlocksPerRank));
  plan.first_block.assign(parts + 1, 0);
  for (size_t r = 0; r < parts; ++r) {
    const int64_t rows = plan.old_offset[r + 1] - plan.old_offset[r];
    plan.first_block[r + 1] = plan.first_block[r] + (rows + plan.block_rows - 1) / plan.block_rows;
  }
  const int64_t blocks = plan.first_block[parts];
  plan.old_first_of_block.resize(size_t(blocks) + 1);
  for (size_t r = 0; r < parts; ++r)
    for (int64_t b = plan.first_block[r]; b < plan.first_block[r + 1]; ++b)
      plan.old_first_of_block[size_t(b)] = plan.old_offset[r] + (b - plan.first_block[r]) * plan.block_rows;
  plan.old_first_of_block[size_t(blocks)] = plan.global_rows;
}

#ifdef PGSIM_HAVE_PTSCOTCH
// The blocks of a partition of the rows (`part`, one per row of `mine`): each rank's runs of
// consecutive rows of one part, every rank's gathered on every rank, each to its part.
void runs_of_parts(RowMigration& plan, const DistributedRows& mine, const std::vector<int32_t>& part, MPI_Comm comm) {
  plan.block_rows = 0;
  std::vector<int64_t> firsts;
  std::vector<int32_t> parts;
  for (int32_t i = 0; i < mine.rows.rows; ++i)
    if (i == 0 || part[size_t(i)] != part[size_t(i) - 1]) {
      firsts.push_back(mine.first_row + i);
      parts.push_back(part[size_t(i)]);
    }
  std::vector<int> counts;
  plan.old_first_of_block = all_gather(firsts, comm, &counts);
  plan.old_first_of_block.push_back(plan.global_rows);
  plan.part_of_block = all_gather(parts, comm);
  plan.first_block.assign(counts.size() + 1, 0);
  for (size_t r = 0; r < counts.size(); ++r) plan.first_block[r + 1] = plan.first_block[r] + counts[r];
}
#else
// Rank 0: METIS's parts for the blocks, or the parse's split where it cuts no more and is
// balanced (repartition.hpp).
std::vector<int32_t> choose_parts(const CsrMatrix& c, const RowMigration& plan, int P) {
  std::vector<int32_t> kept = kept_parts(plan), metis = partition_rows(c, P).owner;
  if (kept_split_balanced(plan) && cut_weight(c, kept) <= cut_weight(c, metis)) return kept;
  match_parts_to_ranks(metis, plan);
  return metis;
}
#endif

}  // namespace

RowMigration plan_migration(const DistributedRows& mine, MPI_Comm comm) {
  const int P = comm_size(comm);
  RowMigration plan;
  plan.global_rows = mine.global_rows;
  if (plan.global_rows < 1) throw std::invalid_argument("repartition: no rows");
  if (plan.global_rows < P) throw std::invalid_argument("repartition: fewer rows than ranks");
  const auto parts = static_cast<size_t>(P);
  plan.old_offset.assign(parts + 1, 0);
  const int64_t my_rows = mine.rows.rows;
  MPI_Allgather(&my_rows, 1, MPI_INT64_T, plan.old_offset.data() + 1, 1, MPI_INT64_T, comm);
  for (size_t r = 0; r < parts; ++r) plan.old_offset[r + 1] += plan.old_offset[r];

  if (kept_split_balanced(plan) && !cut_anywhere(mine, comm)) {
    // No partition cuts less: kept without the coarse graph (on pgsim-gen's grids at P = 2 its
    // edges, their gather and METIS took 0.115 s of 34.9M rows on 16 threads a rank).
    cut_into_blocks(plan, P);
    plan.part_of_block = kept_parts(plan);
  } else {
#ifdef PGSIM_HAVE_PTSCOTCH
    // The rows' own graph partitioned by all ranks at once; its parts given to the ranks.
    runs_of_parts(plan, mine, scotch_partition(mine, P, comm), comm);
    match_parts_to_ranks(plan.part_of_block, plan);
#else
    // The coarse edges, gathered on rank 0.
    const int me = comm_rank(comm);
    cut_into_blocks(plan, P);
    const int64_t blocks = plan.first_block[parts];
    std::vector<CoarseEdge> gathered = gather_to(0, coarse_edges(mine, plan, me), comm);
    plan.part_of_block.resize(static_cast<size_t>(blocks));
    if (me == 0) plan.part_of_block = choose_parts(coarse_matrix(std::move(gathered), blocks), plan, P);
    MPI_Bcast(plan.part_of_block.data(), record_count(size_t(blocks)), MPI_INT32_T, 0, comm);
#endif
  }
  const int64_t blocks = plan.first_block[parts];
  const auto rows_of_block = [&](int64_t b) { return plan.old_first_of_block[size_t(b) + 1] - plan.old_first_of_block[size_t(b)]; };

  // New numbering: by part, then old order; every rank computes it alike.
  plan.new_offset.assign(parts + 1, 0);
  for (int64_t b = 0; b < blocks; ++b) plan.new_offset[static_cast<size_t>(plan.part_of_block[b]) + 1] += rows_of_block(b);
  for (size_t r = 0; r < parts; ++r) plan.new_offset[r + 1] += plan.new_offset[r];
  std::vector<int64_t> next(plan.new_offset.begin(), plan.new_offset.end() - 1);
  plan.new_first_of_block.resize(static_cast<size_t>(blocks));
  for (int64_t b = 0; b < blocks; ++b) {
    int64_t& n = next[static_cast<size_t>(plan.part_of_block[b])];
    plan.new_first_of_block[b] = n;
    n += rows_of_block(b);
  }
  return plan;
}

namespace {

// Rank r's blocks, each with its rows as indices into the rows r held before.
struct Piece {
  int64_t block, lo, hi;  // rows [lo, hi) of rank r's, all of `block`
};

std::vector<Piece> pieces_of(const RowMigration& plan, int r) {
  std::vector<Piece> pieces;
  const int64_t first = plan.old_offset[size_t(r)];
  for (int64_t b = plan.first_block[size_t(r)]; b < plan.first_block[size_t(r) + 1]; ++b)
    pieces.push_back({b, plan.old_first_of_block[size_t(b)] - first, plan.old_first_of_block[size_t(b) + 1] - first});
  return pieces;
}

// A run of records of one array going to one rank: `count` records from `from` in the sender's
// array, to be the records [slot, slot + count) of what that rank receives from this one.
struct Run {
  int64_t from, count, slot;
  int to;
};

// Moves the records of `runs` (each rank's runs to one destination cover its slots without gap;
// none to this rank: what stays is never copied) from `src` into `dst`: the records from rank q
// start at dst[recv_at[q]]. send_counts, recv_counts and recv_at are per rank, this rank's 0.
template <class T>
void move_runs(const T* src, const std::vector<Run>& runs, const std::vector<int>& send_counts,
               const std::vector<int>& recv_counts, const std::vector<int>& recv_at, T* dst, MPI_Comm comm) {
  const int me = comm_rank(comm);
  if (send_counts[size_t(me)] != 0 || recv_counts[size_t(me)] != 0) throw std::logic_error("repartition: a run to this rank");
  const std::vector<int> send_at = displacements(send_counts);
  FillVector<T> send(size_t(send_at.back()) + size_t(send_counts.back()));
#pragma omp parallel for schedule(dynamic, 1)
  for (std::ptrdiff_t r = 0; r < std::ptrdiff_t(runs.size()); ++r) {
    const Run& run = runs[size_t(r)];
    std::copy(src + run.from, src + run.from + run.count, send.data() + send_at[size_t(run.to)] + run.slot);
  }
  const RecordType<T> type;
  MPI_Alltoallv(send.data(), send_counts.data(), send_at.data(), type.get(), dst, recv_counts.data(), recv_at.data(),
                type.get(), comm);
}

}  // namespace

bool couples_elsewhere(const DistributedRows& rows) {
  const int64_t first = rows.first_row, last = first + rows.rows.rows;
  bool cut = false;
#pragma omp parallel for schedule(static) reduction(|| : cut)
  for (int64_t k = 0; k < rows.rows.nnz(); ++k) cut = cut || rows.rows.col[size_t(k)] < first || rows.rows.col[size_t(k)] >= last;
  return cut;
}

int64_t RowMigration::rows_leaving(int r) const {
  int64_t leaving = 0;
  for (const Piece& piece : pieces_of(*this, r))
    if (part_of_block[size_t(piece.block)] != r) leaving += piece.hi - piece.lo;
  return leaving;
}

bool RowMigration::keeps_every_row() const {
  for (size_t r = 0; r + 1 < first_block.size(); ++r)
    for (int64_t b = first_block[r]; b < first_block[r + 1]; ++b)
      if (part_of_block[size_t(b)] != int(r)) return false;
  return true;
}

void match_parts_to_ranks(std::vector<int32_t>& part, const RowMigration& plan) {
  const size_t ranks = plan.old_offset.size() - 1;
  std::vector<int64_t> overlap(ranks * ranks, 0);  // [part][rank]: rows
  for (size_t r = 0; r < ranks; ++r)
    for (int64_t b = plan.first_block[r]; b < plan.first_block[r + 1]; ++b)
      overlap[size_t(part[size_t(b)]) * ranks + r] += plan.old_first_of_block[size_t(b) + 1] - plan.old_first_of_block[size_t(b)];
  std::vector<size_t> pairs(ranks * ranks);
  std::iota(pairs.begin(), pairs.end(), size_t(0));
  std::stable_sort(pairs.begin(), pairs.end(), [&](size_t x, size_t y) { return overlap[x] > overlap[y]; });
  std::vector<int32_t> rank_of(ranks, -1);
  std::vector<bool> taken(ranks, false);
  for (size_t k : pairs) {
    const size_t q = k / ranks, r = k % ranks;
    if (rank_of[q] < 0 && !taken[r]) rank_of[q] = int32_t(r), taken[r] = true;
  }
  for (int32_t& q : part) q = rank_of[size_t(q)];
}

MovedRows::MovedRows(DistributedRows rows)
    : first_row_(rows.first_row), global_rows_(rows.global_rows), rows_(rows.rows.rows), own_(std::move(rows)) {
  segments_.push_back({0, rows_, false, 0});
}

MovedRows migrate(DistributedRows mine, const RowMigration& plan, MPI_Comm comm) {
  const int P = comm_size(comm), me = comm_rank(comm);
  const auto parts = static_cast<size_t>(P);

  // The rows that leave go out in old order, per destination: each receiver knows which old rows
  // it gets from each sender (the plan), in that order, so only lengths, entries and b travel. A
  // block moves whole, so the moves are planned piece by piece (a few thousand): a run of rows and
  // one of entries per piece. The pieces that stay become segments of the result, in place.
  const std::vector<Piece> pieces = pieces_of(plan, me);
  std::vector<Run> row_runs, entry_runs;
  std::vector<int64_t> rows_to(parts, 0), entries_to(parts, 0);
  MovedRows out;
  out.first_row_ = plan.new_offset[me];
  out.global_rows_ = plan.global_rows;
  const int64_t count = plan.new_offset[me + 1] - plan.new_offset[me];
  if (count > INT32_MAX) throw std::length_error("repartition: more rows on one rank than this build's index width");
  out.rows_ = static_cast<int32_t>(count);
  std::vector<MovedRows::Segment> staying;  // new local rows counted from the first that stays
  int32_t stay = 0;
  for (const Piece& piece : pieces) {
    const int d = plan.part_of_block[piece.block];
    const auto rows = static_cast<int32_t>(piece.hi - piece.lo);
    if (d == me) {
      if (!staying.empty() && staying.back().from + staying.back().count == piece.lo) staying.back().count += rows;
      else staying.push_back({stay, rows, false, static_cast<int32_t>(piece.lo)});
      stay += rows;
      continue;
    }
    const int64_t lo = mine.rows.ptr[piece.lo], hi = mine.rows.ptr[piece.hi];
    row_runs.push_back({piece.lo, rows, rows_to[size_t(d)], d});
    entry_runs.push_back({lo, hi - lo, entries_to[size_t(d)], d});
    rows_to[size_t(d)] += rows;
    entries_to[size_t(d)] += hi - lo;
  }
  std::vector<int> counts(2 * parts), recv(2 * parts);  // per rank: rows, entries
  for (size_t r = 0; r < parts; ++r) counts[2 * r] = record_count(size_t(rows_to[r])), counts[2 * r + 1] = record_count(size_t(entries_to[r]));
  MPI_Alltoall(counts.data(), 2, MPI_INT, recv.data(), 2, MPI_INT, comm);
  std::vector<int> row_counts(parts), entry_counts(parts), rows_in(parts), entries_in(parts);
  for (size_t r = 0; r < parts; ++r)
    row_counts[r] = counts[2 * r], entry_counts[r] = counts[2 * r + 1], rows_in[r] = recv[2 * r], entries_in[r] = recv[2 * r + 1];

  // This rank's new rows in new order are its part's blocks in old order, so their old indices
  // grow, and with them their old owners: the rows from lower ranks (grouped by sender, in rank
  // order), then its own that stay, then those from higher ranks.
  const std::vector<int> row_at = displacements(rows_in);
  const int32_t received = row_at.back() + rows_in.back(), lower = row_at[size_t(me)];
  if (int64_t(received) + stay != count) throw std::logic_error("repartition: rows received differ from the plan");
  CsrMatrix& R = out.received_;
  R.rows = received;
  R.ptr.resize(static_cast<size_t>(received) + 1);
  {
    FillVector<int32_t> lengths(static_cast<size_t>(mine.rows.rows));  // of the rows that leave (the others not paged in)
#pragma omp parallel for schedule(dynamic, 1)
    for (std::ptrdiff_t r = 0; r < std::ptrdiff_t(row_runs.size()); ++r)
      for (int64_t i = row_runs[size_t(r)].from; i < row_runs[size_t(r)].from + row_runs[size_t(r)].count; ++i)
        lengths[size_t(i)] = mine.rows.ptr[size_t(i) + 1] - mine.rows.ptr[size_t(i)];
    move_runs(lengths.data(), row_runs, row_counts, rows_in, row_at, R.ptr.data() + 1, comm);
  }
  R.ptr[0] = 0;
  prefix_sum(R.ptr);
  std::vector<int> entry_at(parts);
  for (size_t r = 0; r < parts; ++r) entry_at[r] = R.ptr[size_t(row_at[r])];
  R.val.resize(size_t(R.ptr[size_t(received)]));
  move_runs(mine.rows.val.data(), entry_runs, entry_counts, entries_in, entry_at, R.val.data(), comm);
  R.col.resize(R.val.size());
  move_runs(mine.rows.col.data(), entry_runs, entry_counts, entries_in, entry_at, R.col.data(), comm);
  size_for_overwrite(out.received_b_, static_cast<size_t>(received));
  move_runs(mine.b.data(), row_runs, row_counts, rows_in, row_at, out.received_b_.data(), comm);

  if (lower > 0) out.segments_.push_back({0, lower, true, 0});
  for (MovedRows::Segment seg : staying) {
    seg.first += lower;
    out.segments_.push_back(seg);
  }
  if (received > lower) out.segments_.push_back({lower + stay, received - lower, true, lower});
  out.own_ = std::move(mine);

  // Columns to new indices, in place, unless the plan keeps every row's index. A row's columns
  // stay ascending where the renumbering keeps their order (within a part it does): only the
  // others are sorted.
  if (plan.keeps_every_row()) return out;
  for (const MovedRows::Segment& seg : out.segments_) {
    CsrMatrix& m = seg.received ? out.received_ : out.own_.rows;
#pragma omp parallel for schedule(static, 4096)
    for (int32_t i = seg.from; i < seg.from + seg.count; ++i) {
      int32_t* col = m.col.data() + m.ptr[i];
      const int32_t len = m.ptr[i + 1] - m.ptr[i];
      for (int32_t k = 0; k < len; ++k) col[k] = static_cast<int32_t>(plan.new_index(col[k]));
      if (!std::is_sorted(col, col + len)) sort_row(col, m.val.data() + m.ptr[i], len);
    }
  }
  return out;
}

std::vector<double> return_values(const std::vector<double>& moved, const RowMigration& plan, MPI_Comm comm) {
  const int P = comm_size(comm), me = comm_rank(comm);
  const auto parts = static_cast<size_t>(P);
  // Out: this rank's new rows are in old order (migrate), so those of each old owner are one run,
  // in the order that owner sent them: `moved` goes back as it is, one run per old owner.
  std::vector<int> counts(parts, 0);
  for (size_t o = 0; o < parts; ++o)
    for (int64_t blk = plan.first_block[o]; blk < plan.first_block[o + 1]; ++blk)
      if (plan.part_of_block[size_t(blk)] == me)
        counts[o] += static_cast<int>(plan.old_first_of_block[size_t(blk) + 1] - plan.old_first_of_block[size_t(blk)]);
  if (plan.new_offset[me + 1] - plan.new_offset[me] != static_cast<int64_t>(moved.size()))
    throw std::invalid_argument("return_values: one value per moved row");
  const std::vector<int> moved_at = displacements(counts);
  std::vector<Run> out_runs;
  for (size_t o = 0; o < parts; ++o)
    if (counts[o] > 0 && int(o) != me) out_runs.push_back({moved_at[o], counts[o], 0, int(o)});
  // In: from each other new owner, this rank's old rows of that part, in old order, into a buffer
  // in that order (by sender); then every piece placed, those that stayed on this rank (nearly
  // all, where the parse's ranks already held the parts) read straight from `moved`.
  const int64_t lo = plan.old_offset[me], hi = plan.old_offset[me + 1];
  const std::vector<Piece> pieces = pieces_of(plan, me);
  std::vector<int> taken(parts, 0);
  std::vector<int64_t> from(pieces.size());
  for (size_t p = 0; p < pieces.size(); ++p) {
    int& t = taken[static_cast<size_t>(plan.part_of_block[pieces[p].block])];
    from[p] = t;
    t += static_cast<int>(pieces[p].hi - pieces[p].lo);
  }
  std::vector<int> sent(counts), others(taken);
  sent[size_t(me)] = others[size_t(me)] = 0;
  const std::vector<int> at = displacements(others);
  FillVector<double> in(static_cast<size_t>(at.back()) + static_cast<size_t>(others.back()));
  move_runs(moved.data(), out_runs, sent, others, at, in.data(), comm);
  std::vector<double> values;
  size_for_overwrite(values, static_cast<size_t>(hi - lo));
#pragma omp parallel for schedule(dynamic, 1)
  for (std::ptrdiff_t p = 0; p < std::ptrdiff_t(pieces.size()); ++p) {
    const Piece& piece = pieces[size_t(p)];
    const int d = plan.part_of_block[piece.block];
    const double* src = d == me ? moved.data() + moved_at[size_t(me)] : in.data() + at[size_t(d)];
    const int64_t start = from[size_t(p)] - piece.lo;
    for (int64_t i = piece.lo; i < piece.hi; ++i) values[size_t(i)] = src[start + i];
  }
  return values;
}

}  // namespace pgsim::dist
