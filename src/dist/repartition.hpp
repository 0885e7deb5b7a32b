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
// How. No rank holds the whole graph: every `block_rows` consecutive global rows form one
// vertex of a coarse graph (consecutive rows in file order lie along a wire, so a block is a
// compact piece of one layer), each coarse edge weighted by the summed conductance between its
// two blocks. Each rank sends its blocks' coarse edges to rank 0 (one MPI_Gatherv), which
// partitions the coarse graph with partition_rows (dist/partition.hpp: METIS k-way, weighted)
// and broadcasts one part per block. A block moves whole, so every rank computes any row's new
// global index from the part array alone: the new numbering puts part 0's blocks first, each
// part's blocks in their old order, each block's rows in their old order. Then the rows move
// (one MPI_Alltoallv each for the row lengths, the entries' values, their columns and b), and
// after the solve the values go back the same way reversed.
//
// Cost: the coarse graph has global_rows / block_rows vertices (a few thousand per rank); each
// row crosses the network at most once each way. The rows that stay on their rank are copied
// straight into the new arrays, and where the plan keeps every row's index (on pgsim-gen's
// grids at P = 2 the parse's ranks already hold the nets: at 50M nodes 3,104 of 34.9M rows
// change rank) no column is renumbered or row sorted.
#include <mpi.h>

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

struct RowMigration {
  int64_t block_rows = 1;                 // rows per coarse vertex (the last block may be shorter)
  int64_t global_rows = 0;
  std::vector<int32_t> part_of_block;     // the rank each block moves to
  std::vector<int64_t> new_first_of_block;  // the new global index of each block's first row
  std::vector<int64_t> old_offset;        // per rank + 1: the rows each rank held before
  std::vector<int64_t> new_offset;        // per rank + 1: after

  // Of the rows rank r held before, those that go to another rank (the ones migrate sends).
  int64_t rows_leaving(int r) const;

  int64_t new_index(int64_t old_row) const {
    const int64_t blk = old_row / block_rows;
    return new_first_of_block[static_cast<size_t>(blk)] + old_row - blk * block_rows;
  }
};

// Collective. The coarse graph of `mine` and every rank's, partitioned into the communicator's
// size. Deterministic. Requires global_rows >= 1; ranks may hold no rows.
RowMigration plan_migration(const DistributedRows& mine, MPI_Comm comm);

// Collective: this rank's rows under the plan, columns renumbered, b moved with them. `mine` is
// consumed (released once packed: at most two copies of a rank's rows are held at once).
DistributedRows migrate(DistributedRows mine, const RowMigration& plan, MPI_Comm comm);

// Collective, the inverse of migrate for one value per row: `moved` over this rank's rows after
// the migration, returned over its rows before it.
std::vector<double> return_values(const std::vector<double>& moved, const RowMigration& plan, MPI_Comm comm);

}  // namespace pgsim::dist
