#include "dist/repartition.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <stdexcept>

#include "dist/partition.hpp"
#include "dist/record_exchange.hpp"
#include "mna/prefix_sum.hpp"

namespace pgsim::dist {
namespace {

// Coarse vertices per rank: enough for METIS to find a good cut, few enough to gather on one rank.
constexpr int64_t kBlocksPerRank = 4096;

struct CoarseEdge {
  int64_t from, to;
  double weight;  // summed |G_ij| over the rows of block `from` and the columns of block `to`
};

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

// The coarse edges of this rank's rows: per block, its entries' column blocks sorted and summed.
std::vector<CoarseEdge> coarse_edges(const DistributedRows& mine, int64_t block_rows) {
  const int64_t first = mine.first_row, last = first + mine.rows.rows;
  if (first == last) return {};
  const int64_t first_block = first / block_rows, last_block = (last - 1) / block_rows;
  std::vector<std::vector<CoarseEdge>> per_block(static_cast<size_t>(last_block - first_block + 1));
#pragma omp parallel for schedule(dynamic, 8)
  for (int64_t blk = first_block; blk <= last_block; ++blk) {
    const int64_t lo = std::max(first, blk * block_rows) - first, hi = std::min(last, (blk + 1) * block_rows) - first;
    std::vector<CoarseEdge>& edges = per_block[static_cast<size_t>(blk - first_block)];
    for (int64_t i = lo; i < hi; ++i)
      for (int32_t k = mine.rows.ptr[i]; k < mine.rows.ptr[i + 1]; ++k) {
        const int64_t to = mine.rows.col[k] / block_rows;
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
// A block split between two ranks arrives as two partial rows: their entries are summed here.
CsrMatrix coarse_matrix(std::vector<CoarseEdge> edges, int64_t blocks) {
  std::sort(edges.begin(), edges.end(), [](const CoarseEdge& a, const CoarseEdge& b) {
    return a.from != b.from ? a.from < b.from : a.to < b.to;
  });
  CsrMatrix c;
  c.rows = static_cast<int32_t>(blocks);
  c.ptr.assign(static_cast<size_t>(blocks) + 1, 0);
  for (size_t e = 0; e < edges.size(); ++e) {
    if (e > 0 && edges[e].from == edges[e - 1].from && edges[e].to == edges[e - 1].to) {
      c.val.back() -= edges[e].weight;
      continue;
    }
    c.col.push_back(static_cast<int32_t>(edges[e].to));
    c.val.push_back(-edges[e].weight);
    ++c.ptr[edges[e].from + 1];
  }
  for (int64_t b = 0; b < blocks; ++b) c.ptr[b + 1] += c.ptr[b];
  return c;
}

}  // namespace

RowMigration plan_migration(const DistributedRows& mine, MPI_Comm comm) {
  const int P = comm_size(comm), me = comm_rank(comm);
  RowMigration plan;
  plan.global_rows = mine.global_rows;
  if (plan.global_rows < 1) throw std::invalid_argument("repartition: no rows");
  const auto parts = static_cast<size_t>(P);
  plan.old_offset.assign(parts + 1, 0);
  const int64_t my_rows = mine.rows.rows;
  MPI_Allgather(&my_rows, 1, MPI_INT64_T, plan.old_offset.data() + 1, 1, MPI_INT64_T, comm);
  for (size_t r = 0; r < parts; ++r) plan.old_offset[r + 1] += plan.old_offset[r];

  plan.block_rows = std::max<int64_t>(1, (plan.global_rows + P * kBlocksPerRank - 1) / (P * kBlocksPerRank));
  const int64_t blocks = (plan.global_rows + plan.block_rows - 1) / plan.block_rows;
  if (blocks < P) throw std::invalid_argument("repartition: fewer rows than ranks");

  // The coarse edges, gathered on rank 0.
  std::vector<CoarseEdge> gathered = gather_to(0, coarse_edges(mine, plan.block_rows), comm);

  plan.part_of_block.resize(static_cast<size_t>(blocks));
  if (me == 0) plan.part_of_block = partition_rows(coarse_matrix(std::move(gathered), blocks), P).owner;
  MPI_Bcast(plan.part_of_block.data(), record_count(size_t(blocks)), MPI_INT32_T, 0, comm);

  // New numbering: by part, then old order; every rank computes it alike.
  plan.new_offset.assign(parts + 1, 0);
  for (int64_t b = 0; b < blocks; ++b)
    plan.new_offset[static_cast<size_t>(plan.part_of_block[b]) + 1] +=
        std::min(plan.block_rows, plan.global_rows - b * plan.block_rows);
  for (size_t r = 0; r < parts; ++r) plan.new_offset[r + 1] += plan.new_offset[r];
  std::vector<int64_t> next(plan.new_offset.begin(), plan.new_offset.end() - 1);
  plan.new_first_of_block.resize(static_cast<size_t>(blocks));
  for (int64_t b = 0; b < blocks; ++b) {
    int64_t& n = next[static_cast<size_t>(plan.part_of_block[b])];
    plan.new_first_of_block[b] = n;
    n += std::min(plan.block_rows, plan.global_rows - b * plan.block_rows);
  }
  return plan;
}

namespace {

// This rank's share of the blocks, [first, first + count) of the global rows cut at block edges
// (a block split between two ranks is a piece on each): per piece its rows, as local indices.
struct Piece {
  int64_t block, lo, hi;  // rows [lo, hi) of the share, all in `block`
};

std::vector<Piece> pieces_of(int64_t first, int64_t count, int64_t block_rows) {
  std::vector<Piece> pieces;
  for (int64_t row = first; row < first + count;) {
    const int64_t blk = row / block_rows, end = std::min(first + count, (blk + 1) * block_rows);
    pieces.push_back({blk, row - first, end - first});
    row = end;
  }
  return pieces;
}

}  // namespace

DistributedRows migrate(DistributedRows mine, const RowMigration& plan, MPI_Comm comm) {
  const int P = comm_size(comm), me = comm_rank(comm);
  const auto parts = static_cast<size_t>(P);
  const CsrMatrix& A = mine.rows;

  // Rows go out in old order, per destination: each receiver knows which old rows it gets from
  // each sender (the plan), in that order, so only lengths, entries and b travel. A block moves
  // whole, so the packing is planned piece by piece (a few thousand) and done on all threads.
  const std::vector<Piece> pieces = pieces_of(mine.first_row, A.rows, plan.block_rows);
  std::vector<int> row_counts(parts, 0), entry_counts(parts, 0);
  std::vector<int64_t> rows_to(parts, 0), entries_to(parts, 0), row_slot(pieces.size()), entry_slot(pieces.size());
  for (size_t p = 0; p < pieces.size(); ++p) {
    const auto d = static_cast<size_t>(plan.part_of_block[pieces[p].block]);
    row_slot[p] = rows_to[d], entry_slot[p] = entries_to[d];
    rows_to[d] += pieces[p].hi - pieces[p].lo;
    entries_to[d] += A.ptr[pieces[p].hi] - A.ptr[pieces[p].lo];
  }
  for (size_t r = 0; r < parts; ++r) row_counts[r] = record_count(size_t(rows_to[r])), entry_counts[r] = record_count(size_t(entries_to[r]));
  const std::vector<int> row_at = displacements(row_counts), entry_at = displacements(entry_counts);
  FillVector<int32_t> lengths(static_cast<size_t>(A.rows)), cols(A.col.size());
  FillVector<double> vals(A.col.size()), b(static_cast<size_t>(A.rows));
#pragma omp parallel for schedule(dynamic, 1)
  for (std::ptrdiff_t p = 0; p < std::ptrdiff_t(pieces.size()); ++p) {
    const Piece& piece = pieces[size_t(p)];
    const auto d = static_cast<size_t>(plan.part_of_block[piece.block]);
    const int64_t slot = row_at[d] + row_slot[size_t(p)], entry = entry_at[d] + entry_slot[size_t(p)] - A.ptr[piece.lo];
    for (int64_t i = piece.lo; i < piece.hi; ++i) {
      lengths[size_t(slot + i - piece.lo)] = A.ptr[i + 1] - A.ptr[i];
      b[size_t(slot + i - piece.lo)] = mine.b[size_t(i)];
    }
    for (int64_t k = A.ptr[piece.lo]; k < A.ptr[piece.hi]; ++k) {
      cols[size_t(entry + k)] = static_cast<int32_t>(plan.new_index(A.col[k]));
      vals[size_t(entry + k)] = A.val[k];
    }
  }
  mine = DistributedRows{};  // packed: at most two copies of the rows from here on (sent and received)

  // This rank's new rows in new order are its part's blocks in old order, so their old indices
  // grow, and with them their old owners: the rows arrive (grouped by sender, in rank order)
  // exactly in new order. The received arrays are the new rows' arrays; only each row's columns,
  // renumbered, are sorted again.
  DistributedRows out;
  out.global_rows = plan.global_rows;
  out.first_row = plan.new_offset[me];
  const int64_t count = plan.new_offset[me + 1] - plan.new_offset[me];
  if (count > INT32_MAX) throw std::length_error("repartition: more rows on one rank than this build's index width");
  std::vector<int> received;
  std::vector<int32_t> in_lengths;
  all_to_all(lengths, row_counts, comm, received, in_lengths);
  FillVector<int32_t>().swap(lengths);
  if (static_cast<int64_t>(in_lengths.size()) != count) throw std::logic_error("repartition: rows received differ from the plan");
  all_to_all(b, row_counts, comm, received, out.b);
  FillVector<double>().swap(b);
  all_to_all(cols, entry_counts, comm, received, out.rows.col);
  FillVector<int32_t>().swap(cols);
  all_to_all(vals, entry_counts, comm, received, out.rows.val);
  FillVector<double>().swap(vals);
  CsrMatrix& R = out.rows;
  R.rows = static_cast<int32_t>(count);
  R.ptr.resize(static_cast<size_t>(count) + 1);
  R.ptr[0] = 0;
  std::copy(in_lengths.begin(), in_lengths.end(), R.ptr.begin() + 1);
  prefix_sum(R.ptr);
#pragma omp parallel for schedule(static, 4096)
  for (int32_t i = 0; i < R.rows; ++i) sort_row(R.col.data() + R.ptr[i], R.val.data() + R.ptr[i], R.ptr[i + 1] - R.ptr[i]);
  return out;
}

std::vector<double> return_values(const std::vector<double>& moved, const RowMigration& plan, MPI_Comm comm) {
  const int P = comm_size(comm), me = comm_rank(comm);
  const auto parts = static_cast<size_t>(P);
  // Out: this rank's new rows are in old order (migrate), so those of each old owner are one run,
  // in the order that owner sent them: `moved` goes back as it is.
  std::vector<int> counts(parts, 0);
  for (int64_t blk = 0; blk < static_cast<int64_t>(plan.part_of_block.size()); ++blk) {
    if (plan.part_of_block[blk] != me) continue;
    const int64_t lo = blk * plan.block_rows, hi = std::min(plan.global_rows, lo + plan.block_rows);
    for (size_t o = 0; o < parts; ++o)
      counts[o] += static_cast<int>(std::max<int64_t>(0, std::min(hi, plan.old_offset[o + 1]) - std::max(lo, plan.old_offset[o])));
  }
  if (plan.new_offset[me + 1] - plan.new_offset[me] != static_cast<int64_t>(moved.size()))
    throw std::invalid_argument("return_values: one value per moved row");
  std::vector<int> unused;
  const std::vector<double> in = all_to_all(moved, counts, comm, unused);
  // In: from each new owner, this rank's old rows of that part, in old order; placed piece by piece.
  const int64_t lo = plan.old_offset[me], hi = plan.old_offset[me + 1];
  const std::vector<Piece> pieces = pieces_of(lo, hi - lo, plan.block_rows);
  std::vector<int64_t> taken(parts, 0), from(pieces.size());
  for (size_t p = 0; p < pieces.size(); ++p) {
    int64_t& t = taken[static_cast<size_t>(plan.part_of_block[pieces[p].block])];
    from[p] = t;
    t += pieces[p].hi - pieces[p].lo;
  }
  const std::vector<int> at = displacements(std::vector<int>(taken.begin(), taken.end()));
  std::vector<double> values(static_cast<size_t>(hi - lo));
#pragma omp parallel for schedule(dynamic, 1)
  for (std::ptrdiff_t p = 0; p < std::ptrdiff_t(pieces.size()); ++p) {
    const Piece& piece = pieces[size_t(p)];
    const int64_t start = at[static_cast<size_t>(plan.part_of_block[piece.block])] + from[size_t(p)] - piece.lo;
    for (int64_t i = piece.lo; i < piece.hi; ++i) values[size_t(i)] = in[size_t(start + i)];
  }
  return values;
}

}  // namespace pgsim::dist
