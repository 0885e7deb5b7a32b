#pragma once
// The super-nodes of a distributed netlist (rank_netlist.hpp): voltage sources and shorts (0-ohm
// resistors, inductors) merge nodes into super-nodes exactly as the single-process reduce()
// merges them (mna/reduce.hpp), and the unknowns are numbered as it numbers them. No rank holds
// the whole table: each knows its own nodes and the nodes its elements stamp.
//
// Distributed, in four exchanges (docs/distributed.md):
//   1. Sets. Each rank joins its own merging elements' ends (a local union-find) and tells each
//      end's owner (the rank whose range holds it; ground: rank 0) the smallest node of the end's
//      local set. An owner that hears of one node from several ranks links their sets; the links
//      (only where a set spans ranks: few) are all-gathered and joined on every rank, so every
//      rank knows each of its elements' set by the set's smallest node, its first node.
//   2. Merging. Each merging element goes to the rank owning its set's first node (which will own
//      the set's unknown), received in element order; each set is merged there alone, in element
//      order, with reduce()'s union-find: the same unions, finds and so roundings (merge order
//      within a set is all a set's offsets depend on). The merging rank's members are the nodes
//      of its own sets that it merges, their local sets kept from step 1, and those of the
//      elements other ranks sent, which join them: its own elements are not joined again.
//   3. Answers. The merging rank sends each member node (its set's first node, size, offset) to
//      the node's owner; the ranks' counts of nodes that are not their unknown's first give each
//      rank its first unknown, and a member whose first node lies on another rank asks it.
//   4. Stamped nodes. Each rank asks the owners of the other ranks' nodes its stamping elements
//      (resistors, current sources) touch for their unknown and offset: a bitmap over each
//      owner's range asks, the unknowns come back in node order, the few nonzero offsets apart.
// A disagreeing loop is found by the rank merging its set; the error names its elements from
// their ranks, with reduce()'s text, on every rank.
//
// Numbering. A node's super-node is its set (a node no source or short touches is alone in its
// own). The set holding ground is fixed; every other set is one unknown, numbered in the order of
// its first node. So the unknowns of the super-nodes whose first node rank r owns are one
// contiguous run, in serial order: rank r owns those rows. A node merged with a node of a lower
// rank has its unknown there.
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "dist/element_scan.hpp"
#include "dist/node_subset.hpp"
#include "dist/rank_netlist.hpp"
#include "parser/default_init.hpp"

namespace pgsim::dist {

class SuperNodes {
 public:
  SuperNodes() = default;
  // Collective over comm. Throws InputError on every rank, with reduce()'s text, for a netlist
  // with no voltage or current source and for the first loop of sources and shorts that
  // disagrees (the elements named by their name and file:line, fetched from their ranks).
  // `scanned`: the first pass over nl's elements made already (element_scan.hpp; taken from),
  // required where nl's elements are on a device (nl.device_elements; std::logic_error else).
  SuperNodes(const RankNetlist& nl, MPI_Comm comm, ElementScan* scanned = nullptr);

  // The node lookups below take ground, a node this rank owns, or (unknown_of, offset_of) an end
  // of one of its stamping elements (mna/reduce.hpp's stamps() in DC: resistors, current
  // sources); std::logic_error else.
  // Inline: the stamp (owned_rows.cpp) looks up both ends of every element several times.
  // The unknown of a node's super-node, -1 when its voltage is fixed (ground's super-node).
  int32_t unknown_of(uint32_t node) const {
    if (in_range(node)) return own_unknown(node);
    return node == 0 ? -1 : foreign_unknown_[size_t(foreign_index(node))];
  }
  // v(node) = x[unknown_of(node)] + offset_of(node), or offset_of(node) when fixed.
  double offset_of(uint32_t node) const {
    if (in_range(node)) return own_offset(node);
    return node == 0 ? 0.0 : foreign_offset_[size_t(foreign_index(node))];
  }
  // Whether every node that unknown_of() and offset_of() take and that has an unknown has offset
  // +0.0 (all its bits zero), as on grids whose vias are 0 V sources: then the stamp need not
  // look up the offsets of a conductance between two unknowns.
  bool offsets_zero() const { return offsets_zero_; }
  // The number of netlist nodes in the super-node whose first node is `node` (owned).
  uint32_t size_of(uint32_t node) const;
  // The first node of unknown u's super-node (reduce()'s node_of_unknown); u one of this rank's.
  uint32_t first_node(int32_t u) const;
  // unknown_begin()[q]: rank q's first unknown (q = 0 .. ranks; the last: unknowns()).
  const std::vector<int32_t>& unknown_begin() const { return unknown_begin_; }
  int32_t unknowns() const { return unknown_begin_.back(); }
  // unknown_of() and offset_of()'s arrays (node_lookup.hpp), valid while this lives unchanged.
  NodeLookup lookup() const;
  // Host bytes held by this rank.
  uint64_t bytes() const;
  // The links between ranks' sets that every rank received and joined (the one replicated part:
  // 8 bytes each, a set that a range boundary splits).
  uint64_t links() const { return links_; }

 private:
  uint32_t range_first_ = 1, range_count_ = 0;  // this rank's nodes
  int32_t first_unknown_ = 0;
  uint64_t links_ = 0;
  bool offsets_zero_ = true;
  std::vector<int32_t> unknown_begin_{0, 0};
  // Over the rank's nodes: those that are not their unknown's first node (a later member of a set,
  // or a member of ground's), so unknowns_before() is a count; each node's unknown (4 bytes per
  // owned node); the nonzero offsets (offsets are mostly 0: vias are 0 V sources); the sizes of
  // sets of more than one node, at their first node.
  NodeSubset not_first_;
  std::vector<int32_t> range_unknown_;
  NodeSubset has_offset_;
  std::vector<double> range_offset_;
  NodeSubset has_size_;
  std::vector<uint32_t> range_size_;
  // Other ranks' nodes that this rank's stamping elements touch (a bitmap over all nodes), with
  // their unknowns and offsets.
  NodeSubset foreign_;
  FillVector<int32_t> foreign_unknown_;
  FillVector<double> foreign_offset_;

  bool in_range(uint32_t node) const { return node - range_first_ < range_count_; }
  // Unknowns numbered below `node` (a node of this rank's, or the end of its range).
  int32_t unknowns_before(uint32_t node) const;
  int32_t own_unknown(uint32_t node) const { return range_unknown_[node - range_first_]; }
  double own_offset(uint32_t node) const {  // a bit test for the many nodes of offset 0
    return has_offset_.contains(node) ? range_offset_[has_offset_.count_below(node)] : 0.0;
  }
  int64_t foreign_index(uint32_t node) const {
    const int64_t i = foreign_.contains(node) ? int64_t(foreign_.count_below(node)) : -1;
    if (i < 0) unknown_node(node);
    return i;
  }
  [[noreturn]] static void unknown_node(uint32_t node);
  void fetch_foreign(const std::vector<uint32_t>& first_nodes, uint32_t total_nodes, MPI_Comm comm);
};

}  // namespace pgsim::dist
