#pragma once
// Netlist -> symmetric diagonally dominant system G x = b (DESIGN.md section 2), and back.
#include <cstdint>
#include <vector>

#include "mna/csr.hpp"
#include "parser/netlist.hpp"

namespace pgsim {

struct ReducedSystem {
  // SDD M-matrix over the unknown super-nodes: both triangles, sorted columns, diagonal stored.
  CsrMatrix G;
  std::vector<double> b;
  // Per netlist node: its unknown (or -1 when its voltage is fixed) and its offset, so
  // v(node) = x[unknown_of_node] + offset_of_node, or offset_of_node alone when fixed.
  std::vector<int32_t> unknown_of_node;
  std::vector<double> offset_of_node;
  // Per unknown: the first netlist node of its super-node, whose voltage the unknown is
  // (offset_of_node is 0 there), for names in messages and exports.
  std::vector<uint32_t> node_of_unknown;

  int32_t unknowns() const { return G.rows; }
};

// How capacitors and inductors enter. DC (the default): capacitors open, inductors shorts that
// merge their ends. A transient step (tran/transient.hpp): each capacitor a conductance
// per_farad * C and each inductor (of nonzero L) a conductance per_inverse_henry / L between
// its ends' unknowns, stamped like resistors; no inductor merges nodes.
struct Companion {
  double per_farad = 0;
  double per_inverse_henry = 0;
};

// Throws InputError for a conflicting loop of voltage sources (naming them), for a floating
// component (its size and one node), and for a netlist with no sources.
ReducedSystem reduce(const Netlist& netlist, const Companion* companion = nullptr);

// Every netlist node's voltage from the solution x of G x = b (entry 0, ground, is 0).
std::vector<double> node_voltages(const ReducedSystem& system, const std::vector<double>& x);

}  // namespace pgsim
