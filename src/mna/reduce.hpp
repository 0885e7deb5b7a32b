#pragma once
// Netlist -> symmetric diagonally dominant system G x = b (DESIGN.md section 2), and back.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mna/csr.hpp"
#include "parser/default_init.hpp"
#include "parser/netlist.hpp"

namespace pgsim {

struct ReducedSystem {
  // SDD M-matrix over the unknown super-nodes: both triangles, sorted columns, diagonal stored.
  CsrMatrix G;
  std::vector<double> b;
  // Per netlist node: its unknown (or -1 when its voltage is fixed) and its offset, so
  // v(node) = x[unknown_of_node] + offset_of_node, or offset_of_node alone when fixed.
  // FillVectors: reduce() writes each entry once, on all threads, with no zero fill before.
  FillVector<int32_t> unknown_of_node;
  FillVector<double> offset_of_node;
  // Per unknown: the first netlist node of its super-node, whose voltage the unknown is
  // (offset_of_node is 0 there), for names in messages and exports.
  FillVector<uint32_t> node_of_unknown;

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

// The conductance e stamps between its ends (0: none): resistors, and with a companion
// capacitors and inductors. Inline: the stamps (reduce()'s, a rank's) call it for every element in
// each pass over them.
inline double element_conductance(const Element& e, const Companion* companion) {
  if (e.kind == ElementKind::Resistor) return resistor_conductance(e.value);
  if (!companion) return 0.0;
  if (e.kind == ElementKind::Capacitor) return companion->per_farad * e.value;
  if (e.kind == ElementKind::Inductor && e.value > 0) return companion->per_inverse_henry / e.value;
  return 0.0;
}
// Whether e stamps the rows of its ends' unknowns: a conductance (element_conductance() > 0) or
// a current source.
bool stamps(const Element& e, const Companion* companion);
// Whether e merges its ends into one super-node (with a voltage source's, reduce()'s merges):
// zero-ohm resistors always, inductors in DC (no companion) and zero-henry ones always.
bool is_short(const Element& e, const Companion* companion);

// The elements that merge their ends into super-nodes (voltage sources and shorts, is_short()),
// ascending, and whether any element is a voltage or current source. In parallel; the same for any
// thread count.
struct MergingElements {
  FillVector<uint32_t> elements;
  bool has_source = false;
};
MergingElements merging_elements(const Netlist& netlist, const Companion* companion);

// Throws InputError for a conflicting loop of voltage sources (naming them), for a floating
// component (its size and one node), and for a netlist with no sources.
ReducedSystem reduce(const Netlist& netlist, const Companion* companion = nullptr);
// The same, given merging = merging_elements(netlist, companion) (a DC run finds them first, for
// keep_merging_names(), and does not filter the elements twice).
ReducedSystem reduce(const Netlist& netlist, const Companion* companion, const MergingElements& merging);

// Frees the element names that reduce(netlist) (no companion) never shows: it names elements only
// in the error for a loop of voltage sources and shorts, so only theirs, `merging` =
// merging_elements(netlist, nullptr), are kept (Netlist::keep_element_names(); 15.1M of 84.9M
// elements on a 50M-node grid, whose vias are 0 V sources).
void keep_merging_names(Netlist& netlist, const MergingElements& merging);

// The texts of those errors shared with the distributed reduction (dist/distributed_reduce.hpp),
// its host and GPU stamps (dist/owned_rows.hpp, gpu/device_stamp.hpp) among them.
std::string no_sources_message(const std::string& top_file);
std::string floating_message(int64_t nodes, std::string_view node_name);  // node_name: one node of it
std::string too_many_nonzeros_message();  // the system's entries beyond this build's 32-bit indices

// Every netlist node's voltage from the solution x of G x = b (entry 0, ground, is 0).
std::vector<double> node_voltages(const ReducedSystem& system, const std::vector<double>& x);

}  // namespace pgsim
