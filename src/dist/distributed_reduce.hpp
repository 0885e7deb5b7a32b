#pragma once
// From each rank's part of the netlist (rank_netlist.hpp) to each rank's block of the PCG system
// (partition.hpp's RankBlock), and from the solution back to the voltages of each rank's own
// nodes: the reduction of mna/reduce.hpp and the chain elimination of mna/chain_elimination.hpp
// without any rank holding the whole netlist or matrix (issue 17, docs/distributed.md).
//
// Steps, all collective over comm:
//   1. super_nodes.hpp: sources and shorts sent to the rank owning their set, each set merged
//      there; unknowns numbered as reduce() numbers them. Rank r owns the unknowns whose
//      super-node's first node it owns.
//   2. owned_rows.hpp: each rank's rows of reduce()'s G and b, bit for bit, stamped from every
//      rank's elements through one all-to-all; the floating check.
//   3. The partition (repartition.hpp): the rows move from the parse's ranks to METIS's parts of
//      a coarse graph gathered on rank 0, renumbered so each rank's are again one contiguous run;
//      or they stay, where the parse's split is balanced and cuts no more.
//   4. Chain elimination on each rank's rows with every row coupled to another rank pinned, so
//      eliminated unknowns couple only to their rank's rows and are recovered there.
//   5. The RankBlock of the kept rows: global kept numbering by an MPI_Exscan, the halo's new
//      numbers from the neighbours that own them.
//
// Why step 3. Without it the partition is the parse's: rank r's rows are the super-nodes first
// seen in its byte range. That costs no message, but files are not written for it: pgsim-gen
// writes each net layer by layer, so a range ends between two layers and the cut is every via
// between them (1M-node grid, P = 2: 19k halo rows, 359 PCG iterations against 24 in one
// process; docs/distributed.md), and IBM's files give the ranks very unequal shares of the
// unknowns. Steps 4 and 5 assume only that each rank holds one contiguous run of global rows.
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "dist/owned_rows.hpp"
#include "dist/partition.hpp"
#include "dist/rank_netlist.hpp"
#include "dist/repartition.hpp"
#include "dist/super_nodes.hpp"
#include "mna/chain_elimination.hpp"

namespace pgsim::dist {

// What one rank holds after the reduction (docs/distributed.md counts the bytes).
struct RankSystem {
  SuperNodes super_nodes;              // this rank's nodes' and its stamped nodes' super-nodes
  std::vector<int32_t> unknown_begin;  // ranks + 1: rank q's unknowns as step 2 owns them (those of its nodes)
  uint32_t first_node = 1, owned_nodes = 0;  // the rank's nodes (RankNetlist::first_node, owned())
  std::optional<RowMigration> migration;     // step 3's plan; none: the rows stayed in file order
  // Over the rank's rows after step 3 (local index: global row - the rank's first): the
  // elimination's steps and kept rows; its G and b were moved into block (empty here).
  EliminatedSystem elimination;
  RankBlock block;                     // the rank's rows of the kept system
  // Of the whole reduced system before the elimination (the same on every rank): its stored
  // entries, and ||b||, which PCG's relative tolerance on the kept system is scaled by.
  int64_t reduced_nnz = 0;
  double b_norm = 0;

  int32_t first_unknown() const { return unknown_begin[size_t(block.rank)]; }
  int32_t unknowns() const { return unknown_begin[size_t(block.rank) + 1] - first_unknown(); }
};

// Steps 1 to 5 (step 3 only with `repartition` and more than one rank). Throws InputError, on
// every rank with reduce()'s text, for a netlist without sources, a disagreeing loop of sources
// and shorts, or a floating part of the circuit, and for a rank's rows beyond this build's index
// width (owned_rows.hpp: the stamp agrees on its ranks' own failures, and throws them on every
// rank). Anything else (std::bad_alloc outside the stamp, a GPU failure outside it) may be thrown
// on the rank where it happens alone: the caller must end the job (MpiSession::abort), or the
// other ranks wait forever.
// `merged`, when given, is called once step 1 is done: nl's element names are not read after it
// (they name the members of a loop that step 1 reports), so the caller may release them there,
// before step 2's stamp, where a rank's host memory peaks. `stamped`, when given, is called once
// step 2 is done (the floating check, which names a node, is its end): from then on only nl.rank
// and nl.ranks are read, so the caller may release nl.elements and set nl.owned_names aside
// there, before steps 3 and 4 hold the rows twice.
// `device` >= 0: nl's elements go up to that GPU once (or are there already: nl.device_elements,
// which must be on that device), where step 1's first pass over them (element_scan.hpp) and step
// 2's stamp run (gpu/device_stamp.hpp), the same rows. device < 0 takes nl.elements only.
RankSystem reduce_distributed(const RankNetlist& nl, MPI_Comm comm, bool repartition = true,
                              const std::function<void()>& merged = {}, const std::function<void()>& stamped = {},
                              int device = -1);

// A rank's elements on its GPU (gpu/device_stamp.hpp) with the super-nodes' first pass made there
// (element_scan.hpp), for SuperNodes and stamp_owned_rows(), as reduce_distributed() uses them.
struct ScannedOnDevice {
  std::shared_ptr<gpu::DeviceElements> elements;  // null: the elements stay on the host
  ElementScan scan;
};
// nl's elements on GPU `device` (copied up, unless nl.device_elements holds them there) and
// scanned there; nothing where device < 0. Not collective. Throws GpuError on a CUDA failure;
// std::logic_error in a build without CUDA, MPI and NCCL, and where nl.device_elements is not on
// `device` (or device < 0).
ScannedOnDevice scan_on_device(const RankNetlist& nl, int device);

// Collective. The voltage of every node this rank owns (index i: node first_node + i) from the
// rank's part x_block of the kept system's solution (block order): eliminated unknowns recovered
// locally, values moved back to the ranks of step 2 when step 3 moved the rows, and the values of
// unknowns of other ranks (a super-node spanning ranks) fetched by one all-to-all each way.
// v = offset + x[unknown], or offset + 0 for a fixed node, as node_voltages() writes it.
std::vector<double> owned_voltages(const RankSystem& sys, const std::vector<double>& x_block, MPI_Comm comm);

}  // namespace pgsim::dist
