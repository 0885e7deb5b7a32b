#include "app/ir_drop.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <numeric>

#include "app/grid_name.hpp"
#include "mna/concurrent_union_find.hpp"
#include "mna/fixed_order_sum.hpp"
#include "mna/parallel_select.hpp"
#include "mna/touched_vector.hpp"
#include "parser/default_init.hpp"
#include "parser/shown.hpp"

namespace pgsim {
namespace {

// What the pads of one net say about its supply.
struct NetSupply {
  double source = 0;        // value of the source pad of largest |E|
  bool has_source = false;  // a voltage source to ground
  bool mixed = false;       // source pads that disagree
  int64_t pads = 0;         // sources and resistors to ground; resistors supply 0 V when there is no source
  double value() const { return has_source ? source : 0.0; }
};

bool joins_net(const Element& e) {
  return e.kind == ElementKind::Resistor || e.kind == ElementKind::Inductor ||
         (e.kind == ElementKind::VoltageSource && e.value == 0.0);
}

}  // namespace

SupplyNets supply_nets(const Netlist& netlist) {
  const uint32_t n = netlist.node_count();
  const std::ptrdiff_t elements = std::ptrdiff_t(netlist.elements.size());
  ConcurrentUnionFind nets(static_cast<int32_t>(n));
  // Any order gives the same nets: dynamic, so that a slow thread leaves no tail.
#pragma omp parallel for schedule(dynamic, 4096)
  for (std::ptrdiff_t k = 0; k < elements; ++k) {
    const Element& e = netlist.elements[size_t(k)];
    if (e.plus != Netlist::ground && e.minus != Netlist::ground && joins_net(e))
      nets.unite(static_cast<int32_t>(e.plus), static_cast<int32_t>(e.minus));
  }
  nets.flatten();  // a net's root is its smallest node (never ground: nothing joins it)

  // The pads in element order (each thread filters one contiguous range), then their nets'
  // supplies in that order, so "the pad of largest |E|, the first of equals" is the serial one.
  std::vector<std::vector<uint32_t>> pads_of_thread(static_cast<size_t>(omp_get_max_threads()));
#pragma omp parallel
  {
    std::vector<uint32_t>& mine = pads_of_thread[size_t(omp_get_thread_num())];
#pragma omp for schedule(static) nowait
    for (std::ptrdiff_t k = 0; k < elements; ++k) {
      const Element& e = netlist.elements[size_t(k)];
      if ((e.plus == Netlist::ground) != (e.minus == Netlist::ground) &&
          (e.kind == ElementKind::VoltageSource || e.kind == ElementKind::Resistor || e.kind == ElementKind::Inductor))
        mine.push_back(uint32_t(k));
    }
  }
  std::vector<uint32_t> roots;  // of the supplied nets
  for (const auto& pads : pads_of_thread)
    for (uint32_t k : pads) {
      const Element& e = netlist.elements[k];
      roots.push_back(uint32_t(nets.root(int32_t(e.plus == Netlist::ground ? e.minus : e.plus))));
    }
  std::sort(roots.begin(), roots.end());
  roots.erase(std::unique(roots.begin(), roots.end()), roots.end());

  // net_of_node, written once on all threads (no fill with `none` on one thread first): every
  // root none, then the supplied roots their nets, then below every other node its root's.
  SupplyNets out;
  out.net_of_node.resize(n);
#pragma omp parallel for schedule(static, 4096)
  for (uint32_t i = 0; i < n; ++i)
    if (uint32_t(nets.root(int32_t(i))) == i) out.net_of_node[i] = SupplyNets::none;
  for (size_t i = 0; i < roots.size(); ++i) out.net_of_node[roots[i]] = uint32_t(i);
  std::vector<NetSupply> supply(roots.size());
  for (const auto& pads : pads_of_thread)
    for (uint32_t k : pads) {
      const Element& e = netlist.elements[k];
      const uint32_t node = e.plus == Netlist::ground ? e.minus : e.plus;
      NetSupply& s = supply[out.net_of_node[uint32_t(nets.root(int32_t(node)))]];
      if (e.kind == ElementKind::VoltageSource) {
        const double pad = node == e.plus ? e.value : -e.value;  // v(node) = pad
        if (s.has_source && pad != s.source) s.mixed = true;
        if (!s.has_source || std::abs(pad) > std::abs(s.source)) s.source = pad;
        s.has_source = true;
      }
      ++s.pads;
    }
  for (const NetSupply& s : supply) out.nets.push_back({s.value(), s.pads, s.mixed});
  // Every other node takes its root's net (roots themselves are not written: no race).
#pragma omp parallel for schedule(static, 4096)
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t root = uint32_t(nets.root(int32_t(i)));
    if (root != i) out.net_of_node[i] = out.net_of_node[root];
  }
  return out;
}

NodeDeviations node_deviations(SupplyNets nets, const ReducedSystem& system, const std::vector<double>& voltages) {
  const uint32_t n = static_cast<uint32_t>(nets.net_of_node.size());
  NodeDeviations d;
  d.net = std::move(nets.net_of_node);
  d.nets = std::move(nets.nets);
  // Left unwritten here: the loop writes every node's kind and value, each page first touched by
  // the thread that fills it (a value-initialising resize would zero them all on this thread first).
  d.kind.resize(n);
  d.value.resize(n);
#pragma omp parallel for schedule(static, 4096)
  for (uint32_t i = 0; i < n; ++i) {
    const bool counted = i != 0 && d.net[i] != SupplyNets::none && system.unknown_of_node[i] >= 0;
    const double e = counted ? d.nets[d.net[i]].supply : 0.0;
    d.kind[i] = !counted ? NetKind::None : e == 0.0 ? NetKind::Ground : NetKind::Supply;
    d.value[i] = counted ? deviation(e, voltages[i]) : 0.0;
  }
  return d;
}

void keep_worst(NodeDeviations& worst, const std::vector<double>& voltages) {
  const std::ptrdiff_t n = std::ptrdiff_t(worst.kind.size());
#pragma omp parallel for schedule(static, 4096)
  for (std::ptrdiff_t i = 0; i < n; ++i)
    if (worst.kind[i] != NetKind::None)
      worst.value[i] = std::max(worst.value[i], deviation(worst.nets[worst.net[i]].supply, voltages[i]));
}

namespace {

// Names without an n<layer>_ prefix: a key after every layer number.
constexpr int kOtherLayer = std::numeric_limits<int>::max();

// Nearest-rank position of percentile p among `count` values (increasing with p).
size_t nearest_rank(size_t count, double p) {
  return size_t(std::clamp<std::ptrdiff_t>(std::ptrdiff_t(std::ceil(p * double(count))) - 1, 0, std::ptrdiff_t(count) - 1));
}

// A count of nodes and the first of them with the largest value (0: none yet).
struct Tally {
  int64_t nodes = 0;
  uint32_t worst = 0;
  // Counts node i, which comes after every node counted so far.
  void add(const NodeDeviations& d, uint32_t i) {
    ++nodes;
    if (worst == 0 || d.value[i] > d.value[worst]) worst = i;
  }
  // Counts the nodes of `later`, which all come after these: ties keep the earlier node.
  void add(const NodeDeviations& d, const Tally& later) {
    nodes += later.nodes;
    if (later.worst != 0 && (worst == 0 || d.value[later.worst] > d.value[worst])) worst = later.worst;
  }
};

// One thread's contiguous run of nodes, [begin, end), and what the summary's pass found there.
// The run's counted nodes are keyed by code = local layer * 2 + (kind == Ground), a local layer
// being the index of the node's layer in `layers`.
struct Chunk {
  uint32_t begin = 0, end = 0;
  int64_t uncounted = 0;
  std::vector<Tally> nets;    // per supplied net
  std::vector<int> layers;    // the layers met, in the order met (kOtherLayer: no n<layer>_ prefix)
  std::vector<Tally> codes;   // per code
  std::vector<size_t> segment;  // per code: its segment of the summary's value array (GroupedValues)
  std::vector<size_t> next;     // per code: where its next value goes in that array
};

// The first pass over a chunk: each node's code (-1: not counted) into code[], and its tallies.
void tally(const Netlist& netlist, const NodeDeviations& d, Chunk& c, int32_t* code) {
  c.nets.assign(d.nets.size(), Tally{});
  size_t last = 0;  // the local layer of the last counted node: runs of one layer are the rule
  for (uint32_t i = c.begin; i < c.end; ++i) {
    if (d.kind[i] == NetKind::None) {
      ++c.uncounted;
      code[i] = -1;
      continue;
    }
    const int layer = layer_of_name(netlist.node_names[i]).value_or(kOtherLayer);
    if (last >= c.layers.size() || c.layers[last] != layer) {
      last = size_t(std::find(c.layers.begin(), c.layers.end(), layer) - c.layers.begin());
      if (last == c.layers.size()) {
        c.layers.push_back(layer);
        c.codes.resize(2 * c.layers.size());
      }
    }
    code[i] = int32_t(2 * last + (d.kind[i] == NetKind::Ground));
    c.codes[size_t(code[i])].add(d, i);
    c.nets[d.net[i]].add(d, i);
  }
}

// The counted nodes' values, kind by kind (drop, then bounce) and within a kind group by group
// (layers by number, "other" last), in node order within a group: segment kind * groups + group
// is values[bounds[segment], bounds[segment + 1]).
struct GroupedValues {
  std::vector<int> layers;  // the groups' layers, ascending
  std::vector<size_t> bounds;
  FillVector<double> values;
  size_t groups() const { return layers.size(); }
};

size_t kind_index(NetKind kind) { return kind == NetKind::Supply ? 0 : 1; }

// Between the passes: the groups (every chunk's layers, sorted), each chunk's codes' segments,
// each segment's place in the array and each chunk's place in each segment (chunks in node order).
void place_chunks(std::vector<Chunk>& chunks, GroupedValues& g) {
  for (const Chunk& c : chunks) g.layers.insert(g.layers.end(), c.layers.begin(), c.layers.end());
  std::sort(g.layers.begin(), g.layers.end());
  g.layers.erase(std::unique(g.layers.begin(), g.layers.end()), g.layers.end());
  g.bounds.assign(2 * g.groups() + 1, 0);
  for (Chunk& c : chunks)
    for (size_t code = 0; code < c.codes.size(); ++code) {
      const auto layer = std::lower_bound(g.layers.begin(), g.layers.end(), c.layers[code / 2]);
      c.segment.push_back((code % 2) * g.groups() + size_t(layer - g.layers.begin()));
      g.bounds[c.segment[code] + 1] += size_t(c.codes[code].nodes);
    }
  std::partial_sum(g.bounds.begin(), g.bounds.end(), g.bounds.begin());
  std::vector<size_t> at(g.bounds.begin(), g.bounds.end() - 1);
  for (Chunk& c : chunks)
    for (size_t code = 0; code < c.codes.size(); ++code) {
      c.next.push_back(at[c.segment[code]]);
      at[c.segment[code]] += size_t(c.codes[code].nodes);
    }
  g.values.resize(g.bounds.back());  // written by the second pass, each chunk's places by its thread
}

// The second pass over a chunk: its counted nodes' values to their places.
void place_values(const NodeDeviations& d, Chunk& c, const int32_t* code, double* values) {
  for (uint32_t i = c.begin; i < c.end; ++i)
    if (code[i] >= 0) values[c.next[size_t(code[i])]++] = d.value[i];
}

DeviationStats& stats_of(IrDropGroup& g, NetKind kind) { return kind == NetKind::Supply ? g.drop : g.bounce; }

// Mean and percentiles of each kind's groups and of each kind's whole set (its groups' values in
// group order): the means fixed-order sums (the same bits for any thread count), the percentiles
// exact order statistics, all from one select_ranks over the array.
void fill_distributions(const GroupedValues& g, IrDropReport& r) {
  std::vector<RankQuery> queries;
  std::vector<DeviationStats*> stats;  // per query
  auto add = [&](DeviationStats& s, size_t first, size_t end) {
    const size_t count = g.bounds[end] - g.bounds[first];
    if (count == 0) return;
    const double* values = g.values.data() + g.bounds[first];
    s.mean = fixed_order_sum(int64_t(count), [values](int64_t i) { return values[i]; }) / double(count);
    queries.push_back({first, end, {nearest_rank(count, 0.50), nearest_rank(count, 0.90), nearest_rank(count, 0.99)}});
    stats.push_back(&s);
  };
  for (NetKind kind : {NetKind::Supply, NetKind::Ground}) {
    const size_t first = kind_index(kind) * g.groups();
    add(stats_of(r.all, kind), first, first + g.groups());
    for (size_t k = 0; k < g.groups(); ++k) add(stats_of(r.layers[k], kind), first + k, first + k + 1);
  }
  if (queries.empty()) return;  // no counted node: no segment either
  const std::vector<std::vector<double>> p = select_ranks(g.values.data(), g.bounds, queries);
  for (size_t q = 0; q < queries.size(); ++q) {
    stats[q]->p50 = p[q][0];
    stats[q]->p90 = p[q][1];
    stats[q]->p99 = p[q][2];
  }
}

}  // namespace

// Two passes over the nodes, each thread over one contiguous run: the first finds every counted
// node's layer (from its name, once) and tallies counts and worst nodes per net, layer and kind;
// the second lays the values out group by group for the distributions. Runs merged in node order
// give what one serial pass would, ties keeping the first node.
IrDropReport summarize_ir_drop(const Netlist& netlist, const NodeDeviations& d) {
  IrDropReport r;
  r.all.name = "all";
  for (const SuppliedNet& net : d.nets) {
    (net.supply == 0.0 ? r.ground_nets : r.supply_nets) += 1;
    r.mixed_supply_nets += net.mixed;
  }
  const uint32_t n = netlist.node_count();
  FillVector<int32_t> code(n);  // nodes [1, n): written by the first pass, each run by its thread
  std::vector<Chunk> chunks;
  GroupedValues g;
#pragma omp parallel
  {
    const uint32_t team = uint32_t(omp_get_num_threads()), me = uint32_t(omp_get_thread_num());
#pragma omp single
    chunks.resize(team);
    Chunk& c = chunks[me];
    c.begin = 1 + uint32_t(uint64_t(n - 1) * me / team);
    c.end = 1 + uint32_t(uint64_t(n - 1) * (me + 1) / team);
    tally(netlist, d, c, code.data());
#pragma omp barrier
#pragma omp single
    place_chunks(chunks, g);
    place_values(d, c, code.data(), g.values.data());
  }

  std::vector<Tally> nets(d.nets.size()), segments(g.bounds.size() - 1);
  for (const Chunk& c : chunks) {
    r.uncounted += c.uncounted;
    for (size_t k = 0; k < nets.size(); ++k) nets[k].add(d, c.nets[k]);
    for (size_t k = 0; k < c.codes.size(); ++k) segments[c.segment[k]].add(d, c.codes[k]);
  }
  auto name_worst = [&](DeviationStats& s, const Tally& t) {
    s.nodes = t.nodes;
    if (s.nodes == 0) return;
    s.worst = d.value[t.worst];
    s.worst_node = std::string(netlist.node_names[t.worst]);
  };
  for (size_t k = 0; k < nets.size(); ++k) {
    NetSummary net{d.nets[k], nets[k].nodes, 0, {}};
    if (nets[k].worst) {
      net.worst = d.value[nets[k].worst];
      net.worst_node = std::string(netlist.node_names[nets[k].worst]);
    }
    r.nets.push_back(std::move(net));
  }
  std::stable_sort(r.nets.begin(), r.nets.end(), [](const NetSummary& a, const NetSummary& b) { return a.worst > b.worst; });
  for (int layer : g.layers) r.layers.push_back({layer == kOtherLayer ? "other" : fmt::format("n{}", layer), {}, {}});
  for (NetKind kind : {NetKind::Supply, NetKind::Ground}) {
    Tally all;  // ties between groups: the first node in netlist order, as for nets
    for (size_t k = 0; k < g.groups(); ++k) {
      const Tally& t = segments[kind_index(kind) * g.groups() + k];
      name_worst(stats_of(r.layers[k], kind), t);
      all.nodes += t.nodes;
      if (t.worst != 0 && (all.worst == 0 || d.value[t.worst] > d.value[all.worst] ||
                           (d.value[t.worst] == d.value[all.worst] && t.worst < all.worst)))
        all.worst = t.worst;
    }
    name_worst(stats_of(r.all, kind), all);
  }
  fill_distributions(g, r);
  return r;
}

std::string ir_drop_text(const IrDropReport& r) {
  std::string s = fmt::format("IR drop: {} supply net{}, {} ground net{}; {} nodes counted, {} not (pads, unsupplied)\n",
                              r.supply_nets, r.supply_nets == 1 ? "" : "s", r.ground_nets,
                              r.ground_nets == 1 ? "" : "s", r.all.drop.nodes + r.all.bounce.nodes, r.uncounted);
  if (r.mixed_supply_nets)
    s += fmt::format("  {} net(s) with pads at different voltages: each measured from its pad of largest |E|\n",
                     r.mixed_supply_nets);
  // Names cut as messages cut them (parser/shown.hpp), so a 2 MB name cannot widen the table.
  std::vector<const IrDropGroup*> groups{&r.all};
  for (const auto& g : r.layers) groups.push_back(&g);
  size_t name_width = 10;
  for (const IrDropGroup* g : groups)
    name_width = std::max({name_width, shown_plain(g->drop.worst_node).size(), shown_plain(g->bounce.worst_node).size()});
  s += fmt::format("{:<6} {:<7} {:>10} {:>12}  {:<{}} {:>9} {:>9} {:>9} {:>9}\n", "layer", "kind", "nodes",
                   "worst (V)", "worst node", name_width, "mean", "p50", "p90", "p99");
  auto row = [&](const std::string& group, const char* kind, const DeviationStats& st) {
    if (st.nodes == 0) return;
    s += fmt::format("{:<6} {:<7} {:>10} {:>12.9f}  {:<{}} {:>9.6f} {:>9.6f} {:>9.6f} {:>9.6f}\n", group, kind,
                     st.nodes, st.worst, shown_plain(st.worst_node), name_width, st.mean, st.p50, st.p90, st.p99);
  };
  for (const IrDropGroup* g : groups) {
    row(g->name, "drop", g->drop);
    row(g->name, "bounce", g->bounce);
  }
  constexpr size_t kNetsShown = 8;
  s += fmt::format("nets, worst first:\n{:>12} {:>8} {:>10} {:>12}  {}\n", "supply (V)", "pads", "nodes", "worst (V)",
                   "worst node");
  for (size_t k = 0; k < std::min(r.nets.size(), kNetsShown); ++k) {
    const NetSummary& net = r.nets[k];
    s += fmt::format("{:>12.6g} {:>8} {:>10} {:>12.9f}  {}\n", net.net.supply, net.net.pads, net.nodes, net.worst,
                     shown_plain(net.worst_node));
  }
  if (r.nets.size() > kNetsShown) s += fmt::format("  ... {} more in the --json summary\n", r.nets.size() - kNetsShown);
  return s;
}

namespace {

nlohmann::json stats_json(const DeviationStats& s) {
  if (s.nodes == 0) return nullptr;
  return {{"nodes", s.nodes}, {"worst", s.worst}, {"worst_node", s.worst_node}, {"mean", s.mean},
          {"p50", s.p50},     {"p90", s.p90},     {"p99", s.p99}};
}

}  // namespace

nlohmann::json ir_drop_json(const IrDropReport& r) {
  nlohmann::json j;
  j["supply_nets"] = r.supply_nets;
  j["ground_nets"] = r.ground_nets;
  j["mixed_supply_nets"] = r.mixed_supply_nets;
  j["worst_drop"] = r.all.drop.nodes ? nlohmann::json(r.all.drop.worst) : nlohmann::json(nullptr);
  j["worst_drop_node"] = r.all.drop.nodes ? nlohmann::json(r.all.drop.worst_node) : nlohmann::json(nullptr);
  j["worst_bounce"] = r.all.bounce.nodes ? nlohmann::json(r.all.bounce.worst) : nlohmann::json(nullptr);
  j["worst_bounce_node"] = r.all.bounce.nodes ? nlohmann::json(r.all.bounce.worst_node) : nlohmann::json(nullptr);
  j["drop"] = stats_json(r.all.drop);
  j["bounce"] = stats_json(r.all.bounce);
  j["nets"] = nlohmann::json::array();
  for (const auto& net : r.nets)
    j["nets"].push_back({{"supply", net.net.supply},
                         {"pads", net.net.pads},
                         {"nodes", net.nodes},
                         {"worst", net.nodes ? nlohmann::json(net.worst) : nlohmann::json(nullptr)},
                         {"worst_node", net.nodes ? nlohmann::json(net.worst_node) : nlohmann::json(nullptr)}});
  j["per_layer"] = nlohmann::json::array();
  for (const auto& g : r.layers)
    j["per_layer"].push_back({{"layer", g.name}, {"drop", stats_json(g.drop)}, {"bounce", stats_json(g.bounce)}});
  return j;
}

}  // namespace pgsim
