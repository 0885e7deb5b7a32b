#pragma once
// The super-nodes of a distributed netlist (rank_netlist.hpp), known to every rank: voltage
// sources and shorts (0-ohm resistors, inductors) merge nodes into super-nodes exactly as the
// single-process reduce() merges them (mna/reduce.hpp), and the unknowns are numbered as it
// numbers them.
//
// Merging elements are few next to resistors (pads, and the 0 V vias of IBM-style grids), so
// every rank all-gathers them (plus, minus, volts: 24 bytes each, in element order = rank
// order) and runs the same serial union-find over the nodes they touch: no further message is
// needed to know any node's unknown and offset. Offsets round as the serial reduction rounds
// them (each set merged in element order, then offsets read in increasing node order).
//
// Numbering. A node's super-node is its set of the union-find (a node no source or short
// touches is alone in its own). The set holding ground is fixed; every other set is one
// unknown, numbered in the order of its first (smallest) node. So the unknowns of the
// super-nodes whose first node rank r owns are one contiguous run, in serial order: rank r
// owns those rows. A node merged with a node of a lower rank has its unknown there.
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "dist/rank_netlist.hpp"

namespace pgsim::dist {

class SuperNodes {
 public:
  SuperNodes() = default;
  // Collective over comm. Throws InputError on every rank, with reduce()'s text, for a netlist
  // with no voltage or current source and for the first loop of sources and shorts that
  // disagrees (the elements named by their name and file:line, fetched from their ranks).
  SuperNodes(const RankNetlist& nl, MPI_Comm comm);

  // The unknown of a node's super-node, -1 when its voltage is fixed (ground's super-node).
  int32_t unknown_of(uint32_t node) const;
  // v(node) = x[unknown_of(node)] + offset_of(node), or offset_of(node) when fixed.
  double offset_of(uint32_t node) const;
  // The number of netlist nodes in node's super-node.
  uint32_t size_of(uint32_t node) const;
  // Unknowns numbered below node's: the count of super-nodes whose first node is below `node`.
  // Rank r owns unknowns [unknowns_before(first_node), unknowns_before(first_node + owned())).
  int32_t unknowns_before(uint32_t node) const;
  // The first node of unknown u's super-node (reduce()'s node_of_unknown).
  uint32_t first_node(int32_t u) const;
  int32_t unknowns() const { return unknowns_before(total_nodes_); }
  // Host bytes held (the same on every rank).
  uint64_t bytes() const;

 private:
  // The nodes some merging element touches, and ground, ascending; per member its unknown, offset
  // and super-node size. Every other node is alone: unknown unknowns_before(node), offset 0.
  std::vector<uint32_t> member_;
  std::vector<int32_t> member_unknown_;
  std::vector<double> member_offset_;
  std::vector<uint32_t> member_size_;
  std::vector<uint64_t> member_bits_;  // bit v: node v is a member
  std::vector<uint32_t> member_rank_;  // per word of member_bits_: the members below it
  std::vector<uint32_t> not_first_;  // members that are no unknown's first node (ground's set whole), ascending
  uint32_t total_nodes_ = 1;

  // The unknowns of the rank's own nodes [range_first_, range_first_ + range_unknown_.size()),
  // looked up once (an element's ends are mostly its rank's nodes, and unknowns_before is a
  // binary search over an array of millions): 4 bytes per owned node.
  uint32_t range_first_ = 0;
  std::vector<int32_t> range_unknown_;
  void index_range(uint32_t first, uint32_t count);

  int64_t member_index(uint32_t node) const;  // -1 when not a member
  bool in_range(uint32_t node) const { return node - range_first_ < range_unknown_.size(); }
};

}  // namespace pgsim::dist
