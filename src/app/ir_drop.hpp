#pragma once
// IR-drop report: how far every grid node sits from its net's supply.
//
// A net is a set of nodes joined by resistors, inductors and 0 V sources (vias). A voltage source
// from a net's node to ground, or a resistor to ground, is a pad: it supplies the net at the
// source's value (0 V for a resistor). A net supplied at 0 V is a ground net and its nodes report
// bounce = V - 0; a net supplied at E != 0 is a supply net and its nodes report
// drop = |E| - |V| (E - V for a VDD net). Nodes whose voltage a source fixes (pad nodes) are
// not counted: their drop is zero by construction, and they are package, not grid.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "mna/reduce.hpp"
#include "parser/default_init.hpp"
#include "parser/netlist.hpp"

namespace pgsim {

enum class NetKind : uint8_t { None, Supply, Ground };

struct SuppliedNet {
  double supply = 0;   // volts; pads that disagree: the one of largest |E|
  int64_t pads = 0;    // sources and resistors to ground
  bool mixed = false;  // source pads that disagree
};

// The supplied nets and every netlist node's net, from the netlist's elements: computed right
// after the reduction, so the elements can be released before the solve.
struct SupplyNets {
  static constexpr uint32_t none = UINT32_MAX;
  FillVector<uint32_t> net_of_node;  // index into nets, or none (ground, nodes of nets with no pad)
  std::vector<SuppliedNet> nets;      // in the order of their first node
};

// In parallel; the same result for any thread count.
SupplyNets supply_nets(const Netlist& netlist);

// Per netlist node (index = node id): its net's kind, its drop or bounce in volts, and its net.
// kind None: ground, pad nodes, and nodes of nets with no pad.
struct NodeDeviations {
  FillVector<NetKind> kind;
  FillVector<double> value;
  FillVector<uint32_t> net;  // index into nets; meaningful where kind is not None
  std::vector<SuppliedNet> nets;
};

NodeDeviations node_deviations(SupplyNets nets, const ReducedSystem& system, const std::vector<double>& voltages);

// Drop (supply != 0: |E| - |V|, E - V for VDD) or bounce (supply 0: V) of a node at voltage v.
inline double deviation(double supply, double v) { return supply == 0.0 ? v : supply > 0 ? supply - v : v - supply; }

// Transient: each counted node's value becomes the larger of it and its deviation at `voltages`
// (every netlist node's voltage at one time), so that over a run it holds the worst dynamic drop.
void keep_worst(NodeDeviations& worst, const std::vector<double>& voltages);

// Statistics of one kind (drop or bounce) over a group of nodes, in volts.
struct DeviationStats {
  int64_t nodes = 0;
  double worst = 0;
  std::string worst_node;
  double mean = 0, p50 = 0, p90 = 0, p99 = 0;  // nearest-rank percentiles
};

struct IrDropGroup {
  std::string name;  // "all", a layer ("n1"), or "other" for names without an n<layer>_ prefix
  DeviationStats drop, bounce;
};

struct NetSummary {
  SuppliedNet net;
  int64_t nodes = 0;  // counted nodes
  double worst = 0;   // drop or bounce, by the net's supply
  std::string worst_node;
};

struct IrDropReport {
  IrDropGroup all;
  std::vector<NetSummary> nets;  // worst first
  std::vector<IrDropGroup> layers;  // by layer number, "other" last
  int64_t supply_nets = 0, ground_nets = 0;
  int64_t mixed_supply_nets = 0;
  int64_t uncounted = 0;  // nodes with kind None, ground excluded
};

IrDropReport summarize_ir_drop(const Netlist& netlist, const NodeDeviations& deviations);

std::string ir_drop_text(const IrDropReport& report);
nlohmann::json ir_drop_json(const IrDropReport& report);

}  // namespace pgsim
