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
  assign_touched(d.kind, n, NetKind::None);
  assign_touched(d.value, n);
#pragma omp parallel for schedule(static, 4096)
  for (uint32_t i = 1; i < n; ++i) {
    if (d.net[i] == SupplyNets::none || system.unknown_of_node[i] < 0) continue;
    const double e = d.nets[d.net[i]].supply;
    d.kind[i] = e == 0.0 ? NetKind::Ground : NetKind::Supply;
    d.value[i] = deviation(e, voltages[i]);
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

// Mean and percentiles of one group's values, values[0, count) (worst and its node are tracked
// while filling), on all threads: the mean a fixed-order sum (the same bits for any thread count),
// the percentiles exact order statistics (select_ranks), the values left as they are.
void fill_distribution(DeviationStats& s, const double* values, size_t count) {
  if (count == 0) return;
  s.mean = fixed_order_sum(int64_t(count), [values](int64_t i) { return values[i]; }) / double(count);
  const std::vector<double> p =
      select_ranks(values, count, {nearest_rank(count, 0.50), nearest_rank(count, 0.90), nearest_rank(count, 0.99)});
  s.p50 = p[0];
  s.p90 = p[1];
  s.p99 = p[2];
}

// Every counted node's group (-1: not counted) and the groups' names: layers by number, then "other".
std::vector<int32_t> layer_groups(const Netlist& netlist, const NodeDeviations& d, std::vector<std::string>& names) {
  const uint32_t n = netlist.node_count();
  std::vector<int32_t> group;  // first each counted node's layer, then its group
  assign_touched(group, n, -1);
  std::vector<int> layers;  // the distinct ones, sorted
#pragma omp parallel
  {
    std::vector<int> mine;
#pragma omp for schedule(static, 4096) nowait
    for (uint32_t i = 1; i < n; ++i) {
      if (d.kind[i] == NetKind::None) continue;
      group[i] = layer_of_name(netlist.node_names[i]).value_or(kOtherLayer);
      if (std::find(mine.begin(), mine.end(), group[i]) == mine.end()) mine.push_back(group[i]);
    }
#pragma omp critical
    layers.insert(layers.end(), mine.begin(), mine.end());
  }
  std::sort(layers.begin(), layers.end());
  layers.erase(std::unique(layers.begin(), layers.end()), layers.end());
  for (int layer : layers) names.push_back(layer == kOtherLayer ? "other" : fmt::format("n{}", layer));
#pragma omp parallel for schedule(static, 4096)
  for (uint32_t i = 1; i < n; ++i)
    if (group[i] != -1)
      group[i] = int32_t(std::lower_bound(layers.begin(), layers.end(), group[i]) - layers.begin());
  return group;
}

// Node i's value beats the worst so far, w (0: none yet); ties keep the earlier node.
bool worse(const NodeDeviations& d, uint32_t i, uint32_t w) { return w == 0 || d.value[i] > d.value[w]; }

// Per key (net or group) of the nodes that `key` gives one (-1: skip): the count and the worst
// node, in parallel over contiguous node ranges merged in order, so ties keep the first node as
// a serial pass would.
template <class Key>
void count_and_worst(uint32_t n, size_t keys, Key key, const NodeDeviations& d, std::vector<int64_t>& count,
                     std::vector<uint32_t>& worst) {
  count.assign(keys, 0);
  worst.assign(keys, 0);
  const int threads = omp_get_max_threads();
  std::vector<std::vector<int64_t>> counts(size_t(threads), std::vector<int64_t>(keys, 0));
  std::vector<std::vector<uint32_t>> worsts(size_t(threads), std::vector<uint32_t>(keys, 0));
#pragma omp parallel
  {
    std::vector<int64_t>& c = counts[size_t(omp_get_thread_num())];
    std::vector<uint32_t>& w = worsts[size_t(omp_get_thread_num())];
#pragma omp for schedule(static) nowait
    for (uint32_t i = 1; i < n; ++i) {
      const int64_t k = key(i);
      if (k < 0) continue;
      ++c[size_t(k)];
      if (worse(d, i, w[size_t(k)])) w[size_t(k)] = i;
    }
  }
  for (int t = 0; t < threads; ++t)
    for (size_t k = 0; k < keys; ++k) {
      count[k] += counts[size_t(t)][k];
      const uint32_t i = worsts[size_t(t)][k];
      if (i != 0 && worse(d, i, worst[k])) worst[k] = i;
    }
}

std::vector<NetSummary> summarize_nets(const Netlist& netlist, const NodeDeviations& d) {
  std::vector<NetSummary> nets;
  for (const SuppliedNet& net : d.nets) nets.push_back({net, 0, 0, {}});
  std::vector<int64_t> count;
  std::vector<uint32_t> worst;  // 0: none yet
  count_and_worst(
      netlist.node_count(), d.nets.size(),
      [&](uint32_t i) { return d.kind[i] == NetKind::None ? int64_t(-1) : int64_t(d.net[i]); }, d, count, worst);
  for (size_t k = 0; k < nets.size(); ++k) {
    nets[k].nodes = count[k];
    if (worst[k]) {
      nets[k].worst = d.value[worst[k]];
      nets[k].worst_node = std::string(netlist.node_names[worst[k]]);
    }
  }
  std::stable_sort(nets.begin(), nets.end(), [](const NetSummary& a, const NetSummary& b) { return a.worst > b.worst; });
  return nets;
}

DeviationStats& stats_of(IrDropGroup& g, NetKind kind) { return kind == NetKind::Supply ? g.drop : g.bounce; }

// One kind's values (drop or bounce), group by group, ready for the mean and percentiles.
struct KindValues {
  NetKind kind = NetKind::None;
  std::vector<int64_t> begin;  // group g's values are values[begin[g], begin[g + 1])
  std::vector<double> values;
};

// Drop (kind Supply) or bounce (Ground): each group's and the whole set's count and worst node
// (into r), and the values for their distributions. The values go into one array, group by group
// and in node order within a group (a counting sort, each thread placing one contiguous node
// range), so per-group and overall percentiles share it.
KindValues gather_kind(const Netlist& netlist, const NodeDeviations& d, const std::vector<int32_t>& group, NetKind kind,
                       IrDropReport& r) {
  const uint32_t n = netlist.node_count();
  const size_t groups = r.layers.size();
  auto key = [&](uint32_t i) { return d.kind[i] == kind ? int64_t(group[i]) : int64_t(-1); };
  std::vector<int64_t> count;
  std::vector<uint32_t> worst;  // 0: none yet
  count_and_worst(n, groups, key, d, count, worst);
  uint32_t worst_all = 0;  // ties: the first node in netlist order, as for nets
  for (uint32_t w : worst)
    if (w != 0 && (worst_all == 0 || d.value[w] > d.value[worst_all] || (d.value[w] == d.value[worst_all] && w < worst_all)))
      worst_all = w;
  KindValues out;
  out.kind = kind;
  std::vector<int64_t>& begin = out.begin;
  begin.assign(groups + 1, 0);
  std::partial_sum(count.begin(), count.end(), begin.begin() + 1);
  std::vector<double>& values = out.values;
  assign_touched(values, size_t(begin.back()));
  // next[c * groups + g]: where chunk c of the nodes puts its next value of group g.
  const std::ptrdiff_t chunks = omp_get_max_threads();
  std::vector<int64_t> next(size_t(chunks) * groups, 0);
  auto chunk_begin = [n, chunks](std::ptrdiff_t c) { return 1 + uint32_t(uint64_t(n - 1) * uint64_t(c) / uint64_t(chunks)); };
#pragma omp parallel for schedule(static, 1)
  for (std::ptrdiff_t c = 0; c < chunks; ++c)
    for (uint32_t i = chunk_begin(c); i < chunk_begin(c + 1); ++i)
      if (key(i) >= 0) ++next[size_t(c) * groups + size_t(key(i))];
  for (size_t g = 0; g < groups; ++g) {
    int64_t at = begin[g];
    for (std::ptrdiff_t c = 0; c < chunks; ++c) {
      const int64_t here = next[size_t(c) * groups + g];
      next[size_t(c) * groups + g] = at;
      at += here;
    }
  }
#pragma omp parallel for schedule(static, 1)
  for (std::ptrdiff_t c = 0; c < chunks; ++c)
    for (uint32_t i = chunk_begin(c); i < chunk_begin(c + 1); ++i)
      if (key(i) >= 0) values[size_t(next[size_t(c) * groups + size_t(key(i))]++)] = d.value[i];
  auto name_worst = [&](DeviationStats& s, uint32_t worst_node, int64_t nodes) {
    s.nodes = nodes;
    if (s.nodes == 0) return;
    s.worst = d.value[worst_node];
    s.worst_node = std::string(netlist.node_names[worst_node]);
  };
  name_worst(stats_of(r.all, kind), worst_all, begin.back());
  for (size_t g = 0; g < groups; ++g) name_worst(stats_of(r.layers[g], kind), worst[g], begin[g + 1] - begin[g]);
  return out;
}

// Every distribution of both kinds: the whole set's (all its groups' values, in group order and
// node order within a group) and each group's.
void fill_distributions(const std::vector<KindValues>& kinds, IrDropReport& r) {
  for (const KindValues& k : kinds) {
    fill_distribution(stats_of(r.all, k.kind), k.values.data(), k.values.size());
    for (size_t g = 0; g < r.layers.size(); ++g)
      fill_distribution(stats_of(r.layers[g], k.kind), k.values.data() + k.begin[g], size_t(k.begin[g + 1] - k.begin[g]));
  }
}

}  // namespace

IrDropReport summarize_ir_drop(const Netlist& netlist, const NodeDeviations& d) {
  IrDropReport r;
  r.all.name = "all";
  int64_t uncounted = 0;
#pragma omp parallel for schedule(static, 4096) reduction(+ : uncounted)
  for (uint32_t i = 1; i < netlist.node_count(); ++i) uncounted += d.kind[i] == NetKind::None;
  r.uncounted = uncounted;
  for (const SuppliedNet& net : d.nets) {
    (net.supply == 0.0 ? r.ground_nets : r.supply_nets) += 1;
    r.mixed_supply_nets += net.mixed;
  }
  r.nets = summarize_nets(netlist, d);
  std::vector<std::string> names;
  const std::vector<int32_t> group = layer_groups(netlist, d, names);
  for (auto& name : names) r.layers.push_back({std::move(name), {}, {}});
  std::vector<KindValues> kinds;
  for (NetKind kind : {NetKind::Supply, NetKind::Ground}) kinds.push_back(gather_kind(netlist, d, group, kind, r));
  fill_distributions(kinds, r);
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
