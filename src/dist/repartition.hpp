#pragma once
// Moving the rows of a distributed system from the ranks that assembled them to the ranks a
// partitioner chose, and the solution back.
//
// Why. The distributed parse makes each rank the owner of the nodes first seen in its byte range
// (dist/rank_netlist.hpp), so the rows start out split in file order: slabs of a layer, cut
// wherever a range happens to end. The block preconditioner drops exactly the couplings across
// the cut, so the cut should run through few and weak couplings: METIS's job (on the 2-net
// generated grids at P = 2 it separates the nets, a cut of nothing).
//
// How. No rank holds the whole graph: each rank's rows, from its first, are cut into blocks of
// `block_rows` consecutive rows, each one vertex of a coarse graph (consecutive rows in file order
// lie along a wire, so a block is a compact piece of one layer; a block never spans two ranks, so
// the parse's own split is one of the partitions the coarse graph can express), each coarse edge
// weighted by the summed conductance between its two blocks. Each rank sends its blocks' coarse
// edges to rank 0 (one MPI_Gatherv), which partitions the coarse graph with partition_rows
// (dist/partition.hpp: METIS k-way, weighted), gives each part to the rank holding most of its
// rows (match_parts_to_ranks) and broadcasts one part per block. The parse's
// split is kept instead where its cut weighs no more than METIS's and its ranks' rows are within
// METIS's balance (kBalance; where it cuts nothing, without the coarse graph or METIS at all): a
// partitioner's heuristic may cut what the parse did not, and every coupling cut costs
// iterations. On pgsim-gen's 2-net grids at P = 2 the parse's ranks hold one net each; a block
// straddling the ranks' boundary, when blocks were cut from global row 0, had moved 3,104 rows
// of the 50M-node grid and cut the nets (halos of 3,105 and 1,552 rows): 39 PCG iterations with
// the global coarse correction, 26 with the split kept and no correction (benchmarks/dist). A
// block moves whole, so every rank computes any row's new global index from the
// plan alone: the new numbering puts part 0's blocks first, each part's blocks in their old
// order, each block's rows in their old order. Then the rows move (one MPI_Alltoallv each for
// the row lengths, the entries' values, their columns and b), and after the solve the values go
// back the same way reversed.
//
// With PT-Scotch (a build with PGSIM_HAVE_PTSCOTCH), where the parse's split is not kept without
// a graph (it cuts couplings, or is out of balance), the rows themselves are partitioned, every
// rank its own at once (dist/scotch_partition.hpp), and the blocks are each rank's runs of
// consecutive rows of one part (any length; every rank gathers every block's first row and part),
// Scotch's parts matched to the ranks as METIS's are: no coarse graph, no step on rank 0 alone,
// and no comparison with the parse's split (why and what it gained: dist/scotch_partition.hpp).
//
// Cost: the coarse graph has about global_rows / block_rows vertices (a few thousand per rank);
// each row crosses the network at most once each way. The rows that stay on their rank are not
// copied at all: they stay in the arrays they were assembled in (MovedRows), which the next step
// (the split into own and cut columns, distributed_reduce.cpp) reads, as it copies every row
// anyway. Where the plan keeps every row where it is (keeps_every_row), no column is renumbered,
// no row sorted, and the caller need not migrate at all.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "mna/csr.hpp"

namespace pgsim::dist {

// A rank's contiguous share of the rows of a distributed symmetric system: global rows
// [first_row, first_row + rows.rows), columns as global row indices, sorted within each row.
struct DistributedRows {
  int64_t first_row = 0;
  int64_t global_rows = 0;
  CsrMatrix rows;
  std::vector<double> b;
};

// Whether any entry of `rows` lies in another rank's column (outside [first_row, first_row +
// rows.rows)). All threads; local.
bool couples_elsewhere(const DistributedRows& rows);

// How balanced the kept parse split must be: its largest rank's rows at most this many times the
// average (METIS's own default tolerance, partition.hpp).
inline constexpr double kBalance = 1.03;

struct RowMigration {
  int64_t block_rows = 1;                 // rows per block (each rank's last may be shorter); 0: any (runs of one part)
  int64_t global_rows = 0;
  std::vector<int64_t> old_offset;        // per rank + 1: the rows each rank held before
  std::vector<int64_t> new_offset;        // per rank + 1: after
  std::vector<int64_t> first_block;       // per rank + 1: rank r's rows before are blocks [first_block[r], first_block[r + 1])
  std::vector<int64_t> old_first_of_block;  // per block + 1: its first row before (the last entry global_rows)
  std::vector<int32_t> part_of_block;     // the rank each block moves to
  std::vector<int64_t> new_first_of_block;  // the new global index of each block's first row

  // Of the rows rank r held before, those that go to another rank (the ones migrate sends).
  int64_t rows_leaving(int r) const;
  // Whether every block stays on the rank that held it: then no row moves and none is renumbered.
  bool keeps_every_row() const;

  int64_t block_of(int64_t old_row) const {
    const auto r = static_cast<size_t>(std::upper_bound(old_offset.begin(), old_offset.end(), old_row) - old_offset.begin() - 1);
    if (block_rows > 0) return first_block[r] + (old_row - old_offset[r]) / block_rows;
    const auto from = old_first_of_block.begin() + first_block[r], to = old_first_of_block.begin() + first_block[r + 1];
    return std::upper_bound(from, to, old_row) - old_first_of_block.begin() - 1;
  }
  int64_t new_index(int64_t old_row) const {
    const auto blk = static_cast<size_t>(block_of(old_row));
    return new_first_of_block[blk] + old_row - old_first_of_block[blk];
  }
};

// Collective. The coarse graph of `mine` and every rank's, partitioned into the communicator's
// size (or the parse's split kept, or with PT-Scotch the rows' graph, as above). Deterministic:
// the same rows on the same ranks, the same plan. Requires global_rows >= the communicator's
// size; ranks may hold no rows.
RowMigration plan_migration(const DistributedRows& mine, MPI_Comm comm);

// Renames the parts of part_of_block (one per block of `plan`, in [0, ranks)) so that each goes
// to the rank that holds most of its rows (the largest overlaps first, one part a rank): then
// only the rows that must change rank move. METIS numbers its parts in no particular order (at 2
// ranks on a 300k-node pgsim-gen grid it had named them the other way round: 209,698 of 209,854
// rows moved, where 156 must). plan_migration does this to METIS's parts.
void match_parts_to_ranks(std::vector<int32_t>& part_of_block, const RowMigration& plan);

// A rank's rows after a migration, where they lie: those that stayed on this rank in the arrays
// they were assembled in, those received from other ranks packed in arrays of their own. In new
// order: the rows from lower ranks, this rank's own that stay (in old order), the rows from
// higher ranks.
class MovedRows {
 public:
  MovedRows() = default;
  // Rows that no migration moved: all of them stay.
  explicit MovedRows(DistributedRows rows);

  int64_t first_row() const { return first_row_; }
  int64_t global_rows() const { return global_rows_; }
  int32_t rows() const { return rows_; }

  // Calls f(u, col, val, len, b) for each row u of [from, to) (local, new order), in order: its
  // len entries (columns: new global indices, ascending) where they lie, and its b. Any number
  // of threads may call it at once.
  template <class F>
  void for_rows(int32_t from, int32_t to, F f) const;

  // Whether the rows are exactly the rank's as assembled (no migration moved any in or out):
  // then take_unmoved() hands their arrays back, which for_rows() reads in place.
  bool unmoved() const { return segments_.size() == 1 && !segments_[0].received && own_.rows.rows == rows_; }
  DistributedRows take_unmoved() && { return std::move(own_); }

 private:
  friend MovedRows migrate(DistributedRows mine, const RowMigration& plan, MPI_Comm comm);
  struct Segment {
    int32_t first, count;  // new local rows [first, first + count)
    bool received;         // from received_, else from own_
    int32_t from;          // their first row there
  };
  int64_t first_row_ = 0, global_rows_ = 0;
  int32_t rows_ = 0;
  DistributedRows own_;  // this rank's rows before the migration (those that left too)
  CsrMatrix received_;   // from other ranks, by sender in rank order, each in its old order
  std::vector<double> received_b_;
  std::vector<Segment> segments_;  // covering [0, rows_), ascending
};

// Collective: this rank's rows under the plan, b with them. `mine` is consumed: the rows that
// leave are packed and sent, the others stay where they are (MovedRows).
MovedRows migrate(DistributedRows mine, const RowMigration& plan, MPI_Comm comm);

// Collective, the inverse of migrate for one value per row: `moved` over this rank's rows after
// the migration, returned over its rows before it.
std::vector<double> return_values(const std::vector<double>& moved, const RowMigration& plan, MPI_Comm comm);

template <class F>
void MovedRows::for_rows(int32_t from, int32_t to, F f) const {
  if (from >= to) return;
  auto seg = std::upper_bound(segments_.begin(), segments_.end(), from, [](int32_t u, const Segment& s) { return u < s.first; }) - 1;
  for (int32_t u = from; u < to;) {
    // The rows of one segment, up to `to`: one source.
    const int32_t end = std::min(to, seg->first + seg->count);
    const CsrMatrix& m = seg->received ? received_ : own_.rows;
    const std::vector<double>& b = seg->received ? received_b_ : own_.b;
    const int32_t shift = seg->from - seg->first;  // row u is the source's row u + shift
    for (; u < end; ++u) {
      const int32_t r = u + shift, begin = m.ptr[size_t(r)];
      f(u, m.col.data() + begin, m.val.data() + begin, m.ptr[size_t(r) + 1] - begin, b[size_t(r)]);
    }
    ++seg;
  }
}

}  // namespace pgsim::dist
