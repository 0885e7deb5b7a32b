#pragma once
// From each rank's part of the netlist (rank_netlist.hpp) to each rank's block of the PCG system
// (partition.hpp's RankBlock), and from the solution back to the voltages of each rank's own
// nodes: the reduction of mna/reduce.hpp and the chain elimination of mna/chain_elimination.hpp
// without any rank holding the whole netlist or matrix (issue 17, docs/distributed.md).
//
// Steps, all collective over comm:
//   1. super_nodes.hpp: sources and shorts all-gathered, merged on every rank; unknowns numbered
//      as reduce() numbers them. Rank r owns the unknowns whose super-node's first node it owns.
//   2. owned_rows.hpp: each rank's rows of reduce()'s G and b, bit for bit, stamped from every
//      rank's elements through one all-to-all; the floating check.
//   3. Chain elimination on each rank's own rows with every row coupled to another rank pinned,
//      so eliminated unknowns couple only to their rank's rows and are recovered there.
//   4. The RankBlock of the kept rows: global kept numbering by an MPI_Exscan, the halo's new
//      numbers from the neighbours that own them.
//
// The partition is the parse's: rank r's rows are the super-nodes first seen in its byte range
// of the file. For netlists written layer by layer or row by row (IBM's, pgsim-gen's) that is a
// slab of the die, with a cut no wider than a layer's cross-section, and it costs no message; a
// graph partitioner (METIS, as the interim path uses) would cut less on netlists in random order.
// A repartition fits between steps 2 and 3: rows (with their b) move by one all-to-all to their
// new ranks, the numbering's offsets are redone, and steps 3 and 4 run unchanged on the rows a
// rank then holds (they assume only a contiguous run of global unknowns per rank; a
// non-contiguous one would need the unknown -> rank map that unknown_begin now is).
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "dist/owned_rows.hpp"
#include "dist/partition.hpp"
#include "dist/rank_netlist.hpp"
#include "dist/super_nodes.hpp"
#include "mna/chain_elimination.hpp"

namespace pgsim::dist {

// What one rank holds after the reduction (docs/distributed.md counts the bytes).
struct RankSystem {
  SuperNodes super_nodes;              // the same on every rank
  std::vector<int32_t> unknown_begin;  // ranks + 1: rank q's unknowns before elimination (owned_rows.hpp)
  uint32_t first_node = 1, owned_nodes = 0;  // the rank's nodes (RankNetlist::first_node, owned())
  // Over the rank's unknowns, local index u - unknown_begin[rank]: the elimination's steps and
  // kept rows; its G and b were moved into block (empty here).
  EliminatedSystem elimination;
  RankBlock block;                     // the rank's rows of the kept system

  int32_t first_unknown() const { return unknown_begin[size_t(block.rank)]; }
  int32_t unknowns() const { return elimination.original_unknowns; }
};

// Steps 1 to 4. Throws InputError, on every rank with reduce()'s text, for a netlist without
// sources, a disagreeing loop of sources and shorts, or a floating part of the circuit.
RankSystem reduce_distributed(const RankNetlist& nl, MPI_Comm comm);

// Steps 3 and 4 on rows that steps 1 and 2 gave (rows is consumed; released as it is used).
RankSystem eliminate_and_split(SuperNodes super_nodes, OwnedRows rows, const RankNetlist& nl, MPI_Comm comm);

// Collective. The voltage of every node this rank owns (index i: node first_node + i) from the
// rank's part x_block of the kept system's solution (block order): eliminated unknowns recovered
// locally, the values of unknowns of other ranks (a super-node spanning ranks) fetched by one
// all-to-all. v = offset + x[unknown], or offset + 0 for a fixed node, as node_voltages() writes it.
std::vector<double> owned_voltages(const RankSystem& sys, const std::vector<double>& x_block, MPI_Comm comm);

}  // namespace pgsim::dist
