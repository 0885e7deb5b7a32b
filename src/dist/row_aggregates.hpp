#pragma once
// The distributed row graph contracted before PT-Scotch partitions it (dist/scotch_partition.hpp):
// each rank groups its own rows into small connected aggregates, and the graph of the aggregates
// (vertex weight: its rows; edge weight: the sum of its rows' coupling weights to the other
// aggregate) is what Scotch cuts. The parts of the aggregates are the parts of their rows.
//
// Why: Scotch's distributed multilevel partition of the rows themselves took 20.6 s of a 28.9 s
// run at 50M nodes on 4 ranks (four H200, one thread a rank), most of it in its first, finest
// coarsening steps, which exchange between ranks. The aggregates are that first step done by each
// rank alone, with no exchange but one halo lookup: a fraction of the vertices for Scotch.
//
// Aggregates, one round: vertices are taken in order; a vertex not yet in an aggregate starts one
// and takes every neighbour among this rank's vertices not yet in one; a vertex left alone joins
// the aggregate of its first neighbour among this rank's vertices, if it has one. So an aggregate
// is connected and a few vertices (a grid row's neighbours: about 2 to 4 rows in the first round),
// and the same rows on the same ranks give the same aggregates. Each further round aggregates the
// previous round's aggregates the same way (their graph as the rows'), each row following its
// aggregate up.
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "dist/repartition.hpp"

namespace pgsim::dist {

// The aggregates' graph, this rank's aggregates' part of it: aggregates numbered globally, rank
// after rank (this rank's from `first`), adjacency as CSR over them (global aggregate numbers,
// ascending, no self loop; symmetric over all ranks, as the rows' graph is), both weights >= 1.
struct AggregateGraph {
  std::vector<int32_t> aggregate_of_row;  // per local row: its aggregate (of the last round), local number
  int64_t first = 0;                      // this rank's first aggregate, global number
  std::vector<int64_t> ptr;               // aggregates + 1 offsets into adjacent and weight
  std::vector<int64_t> adjacent;          // global aggregate numbers
  std::vector<int64_t> weight;            // coupling weight (dist/partition.hpp), summed
  std::vector<int64_t> rows;              // per local aggregate: its rows (vertex weight)

  int64_t aggregates() const { return static_cast<int64_t>(rows.size()); }
};

// `rounds` >= 1 rounds of aggregation. Collective over comm (each round: the ranks' first
// vertices, and the aggregates of the vertices other ranks' edges reach, through one exchange
// there and back). `mine`: this rank's rows of a symmetric matrix, global columns (the diagonal
// ignored). The rows' edge weights are coupling_weight over the smallest nonzero off-diagonal
// |entry| of all ranks; an aggregate's edge weight to another is the sum of its members'.
AggregateGraph aggregate_rows(const DistributedRows& mine, int rounds, MPI_Comm comm);

}  // namespace pgsim::dist
