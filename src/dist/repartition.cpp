#include "dist/repartition.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <stdexcept>

#include "dist/partition.hpp"
#include "dist/record_exchange.hpp"

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

DistributedRows migrate(DistributedRows mine, const RowMigration& plan, MPI_Comm comm) {
  const int P = comm_size(comm), me = comm_rank(comm);
  const auto parts = static_cast<size_t>(P);
  const int32_t n = mine.rows.rows;
  auto dest_of = [&](int32_t i) { return plan.part_of_block[(mine.first_row + i) / plan.block_rows]; };

  // Rows go out in old order, per destination: each receiver knows which old rows it gets from
  // each sender (the plan), in that order, so only lengths, entries and b travel.
  std::vector<int> row_counts(parts, 0), entry_counts(parts, 0);
  std::vector<int64_t> entries(parts, 0);
  for (int32_t i = 0; i < n; ++i) {
    ++row_counts[dest_of(i)];
    entries[dest_of(i)] += mine.rows.ptr[i + 1] - mine.rows.ptr[i];
  }
  for (size_t r = 0; r < parts; ++r) entry_counts[r] = record_count(size_t(entries[r]));
  std::vector<int> row_at = displacements(row_counts), entry_at = displacements(entry_counts);
  std::vector<int32_t> lengths(static_cast<size_t>(n)), cols(static_cast<size_t>(mine.rows.nnz()));
  std::vector<double> vals(cols.size()), b(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) {
    const int d = dest_of(i);
    const int slot = row_at[d]++;
    lengths[slot] = mine.rows.ptr[i + 1] - mine.rows.ptr[i];
    b[slot] = mine.b[i];
    for (int32_t k = mine.rows.ptr[i]; k < mine.rows.ptr[i + 1]; ++k) {
      const int e = entry_at[d]++;
      cols[e] = static_cast<int32_t>(plan.new_index(mine.rows.col[k]));
      vals[e] = mine.rows.val[k];
    }
  }
  mine = DistributedRows{};  // packed: at most two copies of the rows from here on (sent and received, then received and new)
  std::vector<int> received, unused;
  const std::vector<int32_t> in_lengths = all_to_all(lengths, row_counts, comm, received);
  std::vector<int32_t>().swap(lengths);
  const std::vector<double> in_b = all_to_all(b, row_counts, comm, unused);
  std::vector<double>().swap(b);
  const std::vector<int32_t> in_cols = all_to_all(cols, entry_counts, comm, unused);
  std::vector<int32_t>().swap(cols);
  const std::vector<double> in_vals = all_to_all(vals, entry_counts, comm, unused);
  std::vector<double>().swap(vals);

  std::vector<int64_t> entry_start(in_lengths.size() + 1, 0);
  for (size_t k = 0; k < in_lengths.size(); ++k) entry_start[k + 1] = entry_start[k] + in_lengths[k];

  // This rank's new rows in new order are its part's blocks in old order: walk them (old indices
  // only grow, so their old owner does too), taking each row from the stream of its old owner.
  DistributedRows out;
  out.global_rows = plan.global_rows;
  out.first_row = plan.new_offset[me];
  const int64_t count = plan.new_offset[me + 1] - plan.new_offset[me];
  if (count > INT32_MAX) throw std::length_error("repartition: more rows on one rank than this build's index width");
  out.rows.rows = static_cast<int32_t>(count);
  out.rows.ptr.assign(static_cast<size_t>(count) + 1, 0);
  out.rows.col.reserve(in_cols.size());
  out.rows.val.reserve(in_vals.size());
  out.b.reserve(static_cast<size_t>(count));
  // Senders' rows arrive grouped by sender, in rank order: where each sender's stream starts.
  std::vector<int64_t> taken(parts, 0);
  for (size_t r = 1; r < parts; ++r) taken[r] = taken[r - 1] + received[r - 1];
  size_t owner = 0;
  std::vector<std::pair<int32_t, double>> row;
  for (int64_t blk = 0; blk < static_cast<int64_t>(plan.part_of_block.size()); ++blk) {
    if (plan.part_of_block[blk] != me) continue;
    const int64_t end = std::min(plan.global_rows, (blk + 1) * plan.block_rows);
    for (int64_t old = blk * plan.block_rows; old < end; ++old) {
      while (old >= plan.old_offset[owner + 1]) ++owner;
      const int64_t k = taken[owner]++;
      row.clear();
      for (int64_t e = entry_start[k]; e < entry_start[k + 1]; ++e) row.emplace_back(in_cols[e], in_vals[e]);
      std::sort(row.begin(), row.end());  // renumbered columns: sorted again
      for (const auto& [c, v] : row) {
        out.rows.col.push_back(c);
        out.rows.val.push_back(v);
      }
      out.rows.ptr[out.b.size() + 1] = static_cast<int32_t>(out.rows.col.size());
      out.b.push_back(in_b[k]);
    }
  }
  return out;
}

std::vector<double> return_values(const std::vector<double>& moved, const RowMigration& plan, MPI_Comm comm) {
  const int P = comm_size(comm), me = comm_rank(comm);
  const auto parts = static_cast<size_t>(P);
  // Out: this rank's new rows (its part's blocks in old order), grouped by old owner, old order
  // within each: the order in which that owner sent them.
  std::vector<int> counts(parts, 0);
  std::vector<size_t> owner_of_row;
  owner_of_row.reserve(moved.size());
  for (int64_t blk = 0; blk < static_cast<int64_t>(plan.part_of_block.size()); ++blk) {
    if (plan.part_of_block[blk] != me) continue;
    const int64_t end = std::min(plan.global_rows, (blk + 1) * plan.block_rows);
    for (int64_t old = blk * plan.block_rows; old < end; ++old) {
      const size_t o = static_cast<size_t>(
          std::upper_bound(plan.old_offset.begin(), plan.old_offset.end(), old) - plan.old_offset.begin() - 1);
      owner_of_row.push_back(o);
      ++counts[o];
    }
  }
  if (owner_of_row.size() != moved.size()) throw std::invalid_argument("return_values: one value per moved row");
  std::vector<int> at = displacements(counts);
  std::vector<double> send(moved.size());
  for (size_t k = 0; k < moved.size(); ++k) send[static_cast<size_t>(at[owner_of_row[k]]++)] = moved[k];
  std::vector<int> unused;
  const std::vector<double> in = all_to_all(send, counts, comm, unused);
  // In: from each new owner, this rank's old rows of that part, in old order.
  const int64_t lo = plan.old_offset[me], hi = plan.old_offset[me + 1];
  std::vector<int> in_counts(parts, 0);
  for (int64_t old = lo; old < hi; ++old) ++in_counts[plan.part_of_block[old / plan.block_rows]];
  std::vector<int> from = displacements(in_counts);
  std::vector<double> values(static_cast<size_t>(hi - lo));
  for (int64_t old = lo; old < hi; ++old)
    values[static_cast<size_t>(old - lo)] = in[static_cast<size_t>(from[plan.part_of_block[old / plan.block_rows]]++)];
  return values;
}

}  // namespace pgsim::dist
