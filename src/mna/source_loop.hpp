#pragma once
// Merging voltage sources and shorts into super-nodes one element at a time, and the error for a
// loop of them that disagrees: shared by the single-process reduction (mna/reduce.cpp) and the
// distributed one (dist/super_nodes.cpp), so both merge, round and report alike.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "mna/potential_union_find.hpp"
#include "parser/netlist.hpp"

namespace pgsim {

// A merging element: v(plus) - v(minus) = forced (0 for a short).
struct MergeEdge {
  uint32_t plus = 0, minus = 0;
  double forced = 0;
  bool is_short = false;  // a 0-ohm resistor or an inductor, not a voltage source
};

// A voltage source or short as the union-find merges it.
inline MergeEdge merge_edge(const Element& e) {
  return {e.plus, e.minus, e.kind == ElementKind::VoltageSource ? e.value : 0.0, e.kind != ElementKind::VoltageSource};
}

// Whether merging e closes a loop of its set that disagrees with it (implied: the difference the
// set already forces); else e is united (merged: e joined two sets).
bool disagrees(const MergeEdge& e, PotentialUnionFind& uf, std::vector<uint32_t>& path, bool& merged, double& implied);

// The first disagreeing loop of edges[0 .. bad], bad being the first edge that disagrees when the
// edges are merged in order on `nodes` nodes (a serial replay, only on this error path).
struct DisagreeingLoop {
  std::vector<size_t> members;  // indices into the edges: the closing edge, then the path it closes
  double forced = 0, implied = 0;
  bool has_short = false;
};
DisagreeingLoop find_disagreeing_loop(const std::vector<MergeEdge>& edges, uint32_t nodes, size_t bad);

// The InputError text, labels[k] naming loop.members[k] ("'V1' (file:line)").
std::string loop_message(const DisagreeingLoop& loop, const std::vector<std::string>& labels);

}  // namespace pgsim
