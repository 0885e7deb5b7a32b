// IR-drop summary, heat maps and progress lines.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <omp.h>

#include "app/exit_codes.hpp"
#include "app/grid_name.hpp"
#include "app/heatmap.hpp"
#include "app/ir_drop.hpp"
#include "app/png_writer.hpp"
#include "app/progress.hpp"
#include "app/system_error.hpp"
#include "mna/fixed_order_sum.hpp"
#include "mna/reduce.hpp"
#include "parser/netlist.hpp"
#include "pcg/direct.hpp"
#include "test_util.hpp"

using namespace pgsim;
using Catch::Detail::Approx;

namespace {

// A netlist solved with the double-precision direct solver, and its IR-drop analysis.
struct Solved {
  Netlist nl;
  ReducedSystem sys;
  std::vector<double> v;
  NodeDeviations dev;
  IrDropReport report;
};

Solved solve(Netlist nl) {
  Solved s{std::move(nl), {}, {}, {}, {}};
  s.sys = reduce(s.nl);
  std::vector<double> x(size_t(s.sys.unknowns()));
  REQUIRE(solve_direct(s.sys.G, s.sys.b, x).converged);
  s.v = node_voltages(s.sys, x);
  s.dev = node_deviations(supply_nets(s.nl), s.sys, s.v);
  s.report = summarize_ir_drop(s.nl, s.dev);
  return s;
}

const IrDropGroup& layer(const IrDropReport& r, const std::string& name) {
  for (const auto& g : r.layers)
    if (g.name == name) return g;
  FAIL("no layer " << name);
  throw;
}

// The nearest-rank percentiles of `values` (any order), by a full sort.
void check_percentiles(const DeviationStats& st, std::vector<double> values) {
  std::sort(values.begin(), values.end());
  auto rank = [&](double p) { return values[size_t(std::ceil(p * double(values.size()))) - 1]; };
  CHECK(st.p50 == rank(0.50));
  CHECK(st.p90 == rank(0.90));
  CHECK(st.p99 == rank(0.99));
}

// Width and height from a PNG file's IHDR chunk.
std::pair<uint32_t, uint32_t> png_size(const std::string& path) {
  const std::string bytes = test::read_text(path);
  REQUIRE(bytes.size() > 24);
  REQUIRE(bytes.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0);
  REQUIRE(bytes.compare(12, 4, "IHDR") == 0);
  auto be32 = [&](size_t at) {
    uint32_t v = 0;
    for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
    return v;
  };
  return {be32(16), be32(20)};
}

// A hand-made grid whose drops follow from Ohm's law by hand (currents in A, resistances in ohm):
//  VDD net at 1.8 V: pad -0.5- n1_0_0 -1- n1_10_0 -1- n1_20_0 =via= n2_20_0, 0.1 A drawn at n2_20_0,
//    and a side branch n1_20_0 -1- "load" carrying no current:
//    drops 0.05, 0.15, 0.25, 0.25, 0.25.
//  Ground net at 0 V: pad -0.25- n3_0_0 -2- n3_0_10, 0.1 A injected at n3_0_10: bounces 0.025, 0.225.
//  A ground net tied by a resistor, no source: 0 -1- tie -1- n4_0_0, 0.01 A injected: 0.01, 0.02.
//  A -1 V net: n5_0_0 fixed at -1 V -1- n5_10_10, 0.1 A injected: V = -0.9, drop 0.1.
const char* kHandGrid = R"(* hand-made grid
V1 _X_n1_0_0 0 1.8
Rp1 _X_n1_0_0 n1_0_0 0.5
R1 n1_0_0 n1_10_0 1
R2 n1_10_0 n1_20_0 1
Vvia n1_20_0 n2_20_0 0
R3 n1_20_0 load 1
I1 n2_20_0 0 0.1
V2 _X_n3_0_0 0 0
Rp2 _X_n3_0_0 n3_0_0 0.25
R4 n3_0_0 n3_0_10 2
I2 0 n3_0_10 0.1
Rt 0 tie 1
R5 tie n4_0_0 1
I3 0 n4_0_0 0.01
V3 0 n5_0_0 1
R6 n5_0_0 n5_10_10 1
I4 0 n5_10_10 0.1
)";

}  // namespace

TEST_CASE("layer and position from IBM-style names", "[ir_drop]") {
  CHECK(layer_of_name("n3_11630_7221") == 3);
  CHECK(layer_of_name("N12_x") == 12);
  CHECK_FALSE(layer_of_name("_X_n3_11630_7221"));
  CHECK_FALSE(layer_of_name("n_1_2"));
  CHECK_FALSE(layer_of_name("n3"));
  CHECK_FALSE(layer_of_name("vdd"));
  auto p = grid_position("n2_-5_7");
  REQUIRE(p);
  CHECK(p->layer == 2);
  CHECK(p->x == -5);
  CHECK(p->y == 7);
  CHECK_FALSE(grid_position("n1_5"));
  CHECK_FALSE(grid_position("n1_5_6_7"));
  CHECK_FALSE(grid_position("n1_5_6x"));
  CHECK_FALSE(grid_position("n1_99999999999999999999_0"));
}

TEST_CASE("drop and bounce of a hand-made grid", "[ir_drop]") {
  Solved s = solve(parse_netlist_text(kHandGrid, "hand.sp"));
  auto node = [&](const char* name) { return s.nl.node_names.find(name); };
  const IrDropReport& r = s.report;

  CHECK(r.supply_nets == 2);  // 1.8 V and -1 V
  CHECK(r.ground_nets == 2);  // a 0 V source and a resistor to ground
  CHECK(r.mixed_supply_nets == 0);
  // Worst first: 0.25 V drop (1.8 V net), 0.225 V bounce, 0.1 V drop (-1 V net), 0.02 V bounce (tied).
  REQUIRE(r.nets.size() == 4);
  CHECK(r.nets[0].net.supply == 1.8);
  CHECK(r.nets[0].net.pads == 1);
  CHECK(r.nets[0].nodes == 5);
  CHECK(r.nets[0].worst_node == "n1_20_0");
  CHECK(r.nets[1].worst_node == "n3_0_10");
  CHECK(r.nets[2].net.supply == -1.0);
  CHECK(r.nets[2].worst == Approx(0.1).margin(1e-12));
  CHECK(r.nets[3].net.supply == 0.0);
  CHECK(r.nets[3].nodes == 2);
  CHECK(r.nets[3].worst_node == "n4_0_0");
  // Nodes a source fixes are not counted: the two _X_ pads and n5_0_0.
  CHECK(r.uncounted == 3);
  CHECK(s.dev.kind[node("_X_n1_0_0")] == NetKind::None);
  CHECK(s.dev.kind[node("n5_0_0")] == NetKind::None);

  const std::map<std::string, double> drop = {{"n1_0_0", 0.05}, {"n1_10_0", 0.15}, {"n1_20_0", 0.25},
                                              {"n2_20_0", 0.25}, {"load", 0.25},   {"n5_10_10", 0.1}};
  const std::map<std::string, double> bounce = {
      {"n3_0_0", 0.025}, {"n3_0_10", 0.225}, {"tie", 0.01}, {"n4_0_0", 0.02}};
  for (auto& [name, value] : drop) {
    CHECK(s.dev.kind[node(name.c_str())] == NetKind::Supply);
    CHECK(s.dev.value[node(name.c_str())] == Approx(value).margin(1e-12));
  }
  for (auto& [name, value] : bounce) {
    CHECK(s.dev.kind[node(name.c_str())] == NetKind::Ground);
    CHECK(s.dev.value[node(name.c_str())] == Approx(value).margin(1e-12));
  }

  // All nodes: drops {0.05, 0.1, 0.15, 0.25, 0.25, 0.25}, bounces {0.01, 0.02, 0.025, 0.225}.
  CHECK(r.all.drop.nodes == 6);
  CHECK(r.all.drop.worst == Approx(0.25).margin(1e-12));
  CHECK(r.all.drop.worst_node == "n1_20_0");  // the first of the three equal drops
  CHECK(r.all.drop.mean == Approx(1.05 / 6).margin(1e-12));
  CHECK(r.all.drop.p50 == Approx(0.15).margin(1e-12));  // nearest rank: the 3rd of 6
  CHECK(r.all.drop.p90 == Approx(0.25).margin(1e-12));
  CHECK(r.all.bounce.nodes == 4);
  CHECK(r.all.bounce.worst == Approx(0.225).margin(1e-12));
  CHECK(r.all.bounce.worst_node == "n3_0_10");
  CHECK(r.all.bounce.mean == Approx(0.28 / 4).margin(1e-12));
  CHECK(r.all.bounce.p50 == Approx(0.02).margin(1e-12));

  // Layers by number, names without an n<layer>_ prefix last.
  std::vector<std::string> names;
  for (const auto& g : r.layers) names.push_back(g.name);
  CHECK(names == std::vector<std::string>{"n1", "n2", "n3", "n4", "n5", "other"});
  CHECK(layer(r, "n1").drop.nodes == 3);
  CHECK(layer(r, "n1").drop.mean == Approx(0.15).margin(1e-12));
  CHECK(layer(r, "n1").bounce.nodes == 0);
  CHECK(layer(r, "n2").drop.worst_node == "n2_20_0");
  CHECK(layer(r, "n3").bounce.worst == Approx(0.225).margin(1e-12));
  CHECK(layer(r, "n5").drop.worst == Approx(0.1).margin(1e-12));
  CHECK(layer(r, "other").drop.worst_node == "load");
  CHECK(layer(r, "other").bounce.worst_node == "tie");

  const std::string text = ir_drop_text(r);
  CHECK_THAT(text, Catch::Contains("2 supply nets, 2 ground nets"));
  CHECK_THAT(text, Catch::Contains("0.250000000  n1_20_0"));
  auto j = ir_drop_json(r);
  CHECK(j["worst_drop"].get<double>() == Approx(0.25).margin(1e-12));
  CHECK(j["worst_bounce_node"] == "n3_0_10");
  CHECK(j["per_layer"].size() == 6);
  CHECK(j["per_layer"][0]["bounce"].is_null());
}

TEST_CASE("pads that disagree supply a net at the largest magnitude", "[ir_drop]") {
  Solved s = solve(parse_netlist_text("V1 a 0 1.8\nV2 c 0 1.7\nR1 a b 1\nR2 b c 1\n", "mixed.sp"));
  CHECK(s.report.mixed_supply_nets == 1);
  CHECK_THAT(ir_drop_text(s.report), Catch::Contains("1 net(s) with pads at different voltages"));
  CHECK(s.report.supply_nets == 1);
  CHECK(s.dev.value[s.nl.node_names.find("b")] == Approx(0.05).margin(1e-12));  // 1.8 - 1.75
}

// Nets in first-node order, each node its net's, none for the ground and for a net with no pad
// (here one reached from the supplied nets only through a current source and a capacitor), on
// enough nodes for several threads' shares.
TEST_CASE("supply_nets: every node's net, none where no pad supplies it, any thread count", "[ir_drop]") {
  const int n = 20000;
  std::string text = "Rg0 g0 0 2\nVs0 s0 0 1.2\nIu u0 s0 1m\nCu u0 g0 1p\n";
  for (int k = 1; k < n; ++k)
    for (const char* net : {"s", "u", "g"})
      text += std::string("R") + net + std::to_string(k) + " " + net + std::to_string(k - 1) + " " + net +
              std::to_string(k) + " 1\n";
  const Netlist nl = parse_netlist_text(text, "nets.sp");
  const int saved = omp_get_max_threads();
  for (int threads : {1, 2, 3}) {
    omp_set_num_threads(threads);
    const SupplyNets nets = supply_nets(nl);
    REQUIRE(nets.nets.size() == 2);
    CHECK(nets.nets[0].supply == 0.0);  // g0 is the first node of a supplied net
    CHECK(nets.nets[0].pads == 1);
    CHECK(nets.nets[1].supply == 1.2);
    REQUIRE(nets.net_of_node.size() == nl.node_count());
    CHECK(nets.net_of_node[Netlist::ground] == SupplyNets::none);
    int64_t wrong = 0;
    for (int k = 0; k < n; ++k) {
      wrong += nets.net_of_node[nl.node_names.find("g" + std::to_string(k))] != 0;
      wrong += nets.net_of_node[nl.node_names.find("s" + std::to_string(k))] != 1;
      wrong += nets.net_of_node[nl.node_names.find("u" + std::to_string(k))] != SupplyNets::none;
    }
    CHECK(wrong == 0);
  }
  omp_set_num_threads(saved);
}

TEST_CASE("ibmpg1: worst drop and bounce of the computed voltages", "[ir_drop][ibmpg1]") {
  Solved s = solve(parse_netlist(test::shared_data("ibmpg1.spice")));
  const IrDropReport& r = s.report;
  CHECK(r.supply_nets == 4);
  CHECK(r.ground_nets == 1);
  CHECK(r.uncounted == 277);  // the pads: 100 at 1.8 V, 177 at 0 V
  REQUIRE(r.nets.size() == 5);
  CHECK(r.nets[0].worst_node == "n1_11583_14936");
  int64_t pads = 0, nodes = 0;
  for (const auto& net : r.nets) {
    pads += net.net.pads;
    nodes += net.nodes;
  }
  CHECK(pads == 277);
  CHECK(nodes == r.all.drop.nodes + r.all.bounce.nodes);
  CHECK(r.all.drop.worst == Approx(0.8117941635).margin(1e-6));
  CHECK(r.all.drop.worst_node == "n1_11583_14936");
  CHECK(r.all.bounce.worst == Approx(0.694645604).margin(1e-6));
  // n0 and n2 share this point through a via, at the same voltage.
  CHECK_THAT(r.all.bounce.worst_node, Catch::Equals("n0_13929_13842") || Catch::Equals("n2_13929_13842"));
  // VDD on n1 and n3, ground on n0 and n2, joined by vias.
  REQUIRE(r.layers.size() == 4);
  CHECK(layer(r, "n0").bounce.nodes == 8644);
  CHECK(layer(r, "n0").drop.nodes == 0);
  CHECK(layer(r, "n1").drop.nodes == 5387);
  CHECK(layer(r, "n2").bounce.nodes == 10242);
  CHECK(layer(r, "n3").drop.nodes == 6085);
  CHECK(layer(r, "n3").drop.worst == Approx(0.8117941635).margin(1e-6));
  CHECK(r.all.drop.p50 <= r.all.drop.p90);
  CHECK(r.all.drop.p90 <= r.all.drop.p99);
  CHECK(r.all.drop.p99 <= r.all.drop.worst);
  // Percentiles and means against a full sort and a plain sum, per layer and over all, and the
  // same for any thread count.
  for (NetKind kind : {NetKind::Supply, NetKind::Ground}) {
    std::map<std::string, std::vector<double>> by_group;
    for (uint32_t i = 1; i < s.nl.node_count(); ++i)
      if (s.dev.kind[i] == kind) {
        by_group["all"].push_back(s.dev.value[i]);
        by_group["n" + std::to_string(*layer_of_name(s.nl.node_names[i]))].push_back(s.dev.value[i]);
      }
    for (auto& [name, values] : by_group) {
      INFO(name << (kind == NetKind::Supply ? " drop" : " bounce"));
      const IrDropGroup& g = name == "all" ? r.all : layer(r, name);
      const DeviationStats& st = kind == NetKind::Supply ? g.drop : g.bounce;
      double sum = 0;
      for (double v : values) sum += v;
      CHECK(st.mean == Approx(sum / double(values.size())).epsilon(1e-12));
      check_percentiles(st, values);
    }
  }
  const int threads_before = omp_get_max_threads();
  for (int threads : {2, 8}) {
    omp_set_num_threads(threads);
    CHECK(ir_drop_json(summarize_ir_drop(s.nl, s.dev)) == ir_drop_json(r));
  }
  omp_set_num_threads(threads_before);

  SECTION("heat maps") {
    auto maps = render_heatmaps(s.nl, s.dev);
    REQUIRE(maps.size() == 4);
    for (size_t i = 0; i < maps.size(); ++i) {
      CHECK(maps[i].layer == "n" + std::to_string(i));
      CHECK(std::max(maps[i].plot_w, maps[i].plot_h) == 1000);
      CHECK(maps[i].image.width() == maps[0].image.width());
    }
    CHECK(maps[1].max_mv == Approx(811.7941635).margin(1e-3));
  }
}

TEST_CASE("heat map pixels: nodes at their positions, colour bar range", "[ir_drop][heatmap]") {
  Solved s = solve(parse_netlist_text(kHandGrid, "hand.sp"));
  auto maps = render_heatmaps(s.nl, s.dev, 200);
  // Layers with positioned, counted nodes: n1 to n5 ("load" and "tie" have no position).
  REQUIRE(maps.size() == 5);
  const Heatmap& n1 = maps[0];
  CHECK(n1.layer == "n1");
  // The die spans x 0..20, y 0..10 over all layers: 200 px for 20 units.
  CHECK(n1.plot_w == 200);
  CHECK(n1.plot_h == 101);
  CHECK(n1.min_mv == Approx(50).margin(1e-9));
  CHECK(n1.max_mv == Approx(250).margin(1e-9));
  auto color_at = [&](const Heatmap& m, double x, double y) {
    const int px = m.plot_x + int(std::lround((x - m.x0) * m.scale));
    const int py = m.plot_y + m.plot_h - 1 - int(std::lround((y - m.y0) * m.scale));
    return m.image.at(px, py);
  };
  auto same = [](Rgb a, Rgb b) { return a.r == b.r && a.g == b.g && a.b == b.b; };
  CHECK(same(color_at(n1, 0, 0), heat_color(0.0)));   // n1_0_0, the layer's smallest drop
  CHECK(same(color_at(n1, 10, 0), heat_color(0.5)));  // n1_10_0, halfway
  CHECK(same(color_at(n1, 10, 10), Rgb{222, 222, 222}));  // no node near: the background
  CHECK(same(heat_color(0.0), Rgb{68, 1, 84}));
  CHECK(same(heat_color(1.0), Rgb{253, 231, 37}));
}

TEST_CASE("summary of 300,000 nodes against a serial pass, on any thread count", "[ir_drop][parallel]") {
  // Past select_ranks's one-thread size: nodes on layers 0, 3, 6, 9, 12 and 12345 and without a
  // layer prefix, of three nets (1.8 V, 0 V, -1 V), one in 20 not counted; values with ties,
  // negatives and zeros of both signs.
  const uint32_t n = 300001;
  Netlist nl;
  nl.node_names.intern("0");
  NodeDeviations d;
  d.nets = {{1.8, 2, false}, {0.0, 1, false}, {-1.0, 3, true}};
  d.kind.resize(n);
  d.value.resize(n);
  d.net.assign(n, SupplyNets::none);
  d.kind[0] = NetKind::None;
  d.value[0] = 0;
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> drop(-0.05, 0.3);
  for (uint32_t i = 1; i < n; ++i) {
    const uint64_t layer = rng() % 8;
    const std::string name = layer < 5    ? "n" + std::to_string(3 * layer) + "_" + std::to_string(i) + "_7"
                             : layer == 5 ? "N12345_" + std::to_string(i)
                                          : "x" + std::to_string(i);
    REQUIRE(nl.node_names.intern(name) == i);
    d.net[i] = uint32_t(rng() % 3);
    d.kind[i] = rng() % 20 == 0 ? NetKind::None : d.net[i] == 1 ? NetKind::Ground : NetKind::Supply;
    const uint64_t shape = rng() % 10;
    d.value[i] = shape == 0 ? 0.0 : shape == 1 ? -0.0 : shape < 5 ? std::round(drop(rng) * 1e3) / 1e3 : drop(rng);
    if (d.kind[i] == NetKind::None) d.value[i] = 0;
  }

  // The serial answer: each kind's nodes by layer (number order, no prefix last), in node order.
  constexpr int kOther = std::numeric_limits<int>::max();
  std::map<NetKind, std::map<int, std::vector<uint32_t>>> members;
  std::vector<std::vector<uint32_t>> of_net(3);
  int64_t uncounted = 0;
  for (uint32_t i = 1; i < n; ++i) {
    if (d.kind[i] == NetKind::None) {
      ++uncounted;
      continue;
    }
    members[d.kind[i]][layer_of_name(nl.node_names[i]).value_or(kOther)].push_back(i);
    of_net[d.net[i]].push_back(i);
  }
  auto first_worst = [&](const std::vector<uint32_t>& nodes) {  // ties: the first in netlist order
    uint32_t w = nodes.front();
    for (uint32_t i : nodes)
      if (d.value[i] > d.value[w] || (d.value[i] == d.value[w] && i < w)) w = i;
    return w;
  };
  auto check_stats = [&](const DeviationStats& st, const std::vector<uint32_t>& nodes) {
    REQUIRE(st.nodes == int64_t(nodes.size()));
    const uint32_t w = first_worst(nodes);
    CHECK(st.worst == d.value[w]);
    CHECK(st.worst_node == std::string(nl.node_names[w]));
    std::vector<double> v;
    for (uint32_t i : nodes) v.push_back(d.value[i]);
    CHECK(st.mean == fixed_order_sum(int64_t(v.size()), [&](int64_t k) { return v[size_t(k)]; }) / double(v.size()));
    check_percentiles(st, v);
  };

  const int threads_before = omp_get_max_threads();
  for (int threads : {1, 2, 3, 8}) {
    INFO("threads " << threads);
    omp_set_num_threads(threads);
    const IrDropReport r = summarize_ir_drop(nl, d);
    CHECK(r.uncounted == uncounted);
    CHECK(r.supply_nets == 2);
    CHECK(r.ground_nets == 1);
    CHECK(r.mixed_supply_nets == 1);
    std::vector<std::string> names;
    for (const auto& g : r.layers) names.push_back(g.name);
    REQUIRE(names == std::vector<std::string>{"n0", "n3", "n6", "n9", "n12", "n12345", "other"});
    for (NetKind kind : {NetKind::Supply, NetKind::Ground}) {
      INFO((kind == NetKind::Supply ? "drop" : "bounce"));
      std::vector<uint32_t> all;  // the groups' nodes in group order: the order the mean sums them
      size_t k = 0;
      for (const auto& [layer, nodes] : members[kind]) {
        INFO("layer " << layer);
        check_stats(kind == NetKind::Supply ? r.layers[k].drop : r.layers[k].bounce, nodes);
        all.insert(all.end(), nodes.begin(), nodes.end());
        ++k;
      }
      check_stats(kind == NetKind::Supply ? r.all.drop : r.all.bounce, all);
    }
    REQUIRE(r.nets.size() == 3);
    for (const NetSummary& net : r.nets) {
      const size_t k = net.net.supply == 1.8 ? 0 : net.net.supply == 0.0 ? 1 : 2;
      CHECK(net.net.pads == d.nets[k].pads);
      CHECK(net.nodes == int64_t(of_net[k].size()));
      CHECK(net.worst_node == std::string(nl.node_names[first_worst(of_net[k])]));
    }
    CHECK(r.nets[0].worst >= r.nets[1].worst);
    CHECK(r.nets[1].worst >= r.nets[2].worst);
  }
  omp_set_num_threads(threads_before);
}

TEST_CASE("pgsim --json and --heatmap on ibmpg1", "[ir_drop][ibmpg1][app]") {
  test::TempDir dir;
  const std::string args = test::shared_data("ibmpg1.spice") + " --solver direct --json " + dir.file("r.json") +
                           " --heatmap " + dir.file("maps");
  if (!png_supported()) {
    CHECK(test::run_pgsim(args, dir.file("log")) == kExitInput);
    return;
  }
  REQUIRE(test::run_pgsim(args, dir.file("log")) == kExitOk);
  const std::string log = test::read_text(dir.file("log"));
  CHECK_THAT(log, Catch::Contains("n1_11583_14936"));  // the summary names the worst node
  auto j = nlohmann::json::parse(test::read_text(dir.file("r.json")))["ir_drop"];
  CHECK(j["worst_drop"].get<double>() == Approx(0.8117941635).margin(1e-6));
  CHECK(j["worst_drop_node"] == "n1_11583_14936");
  CHECK(j["worst_bounce"].get<double>() == Approx(0.694645604).margin(1e-6));
  CHECK(j["worst_bounce_node"].is_string());
  CHECK(j["nets"].size() == 5);
  CHECK(j["nets"][0]["worst_node"] == "n1_11583_14936");
  REQUIRE(j["per_layer"].size() == 4);
  CHECK(j["per_layer"][1]["layer"] == "n1");
  CHECK(j["per_layer"][1]["drop"]["nodes"] == 5387);
  CHECK(j["per_layer"][1]["bounce"].is_null());

  Solved s = solve(parse_netlist(test::shared_data("ibmpg1.spice")));
  auto maps = render_heatmaps(s.nl, s.dev);
  for (const Heatmap& m : maps) {
    const auto size = png_size(dir.file("maps/" + m.layer + ".png"));
    CHECK(size.first == uint32_t(m.image.width()));
    CHECK(size.second == uint32_t(m.image.height()));
  }
}

TEST_CASE("with -q no IR-drop summary is printed", "[ir_drop][app]") {
  test::TempDir dir;
  const std::string net = dir.write("g.sp", kHandGrid);
  REQUIRE(test::run_pgsim(net + " --solver direct", dir.file("log")) == kExitOk);
  CHECK_THAT(test::read_text(dir.file("log")), Catch::Contains("IR drop:"));
  REQUIRE(test::run_pgsim(net + " --solver direct -q", dir.file("log")) == kExitOk);
  CHECK(test::read_text(dir.file("log")).empty());  // not a terminal and -q: no progress either
}

TEST_CASE("write_png writes a PNG of the image's size", "[heatmap]") {
  test::TempDir dir;
  RgbImage img(7, 3, Rgb{1, 2, 3});
  if (!png_supported()) {
    CHECK_THROWS_AS(write_png(dir.file("a.png"), img), SystemError);
    return;
  }
  write_png(dir.file("a.png"), img);
  CHECK(png_size(dir.file("a.png")) == std::pair<uint32_t, uint32_t>{7, 3});
}

TEST_CASE("progress shows after a second, at most every tenth, and clears its line", "[progress]") {
  double now = 100.0;
  std::string out;
  {
    ProgressLine line(true, [&] { return now; }, [&](const std::string& s) { out += s; });
    line.update("a");
    now = 100.9;
    CHECK_FALSE(line.due());
    line.update("b");
    CHECK(out.empty());  // the phase has not run a second yet
    now = 101.0;
    CHECK(line.due());
    line.update("long text");
    CHECK(out == "\rlong text");
    now = 101.05;
    line.update("c");
    CHECK(out == "\rlong text");  // too soon after the last update
    now = 101.2;
    line.update("short");
    CHECK(out == "\rlong text\rshort    ");  // padded over the longer text
  }  // the destructor clears the line
  CHECK(out == "\rlong text\rshort    \r     \r");
}

TEST_CASE("disabled progress prints nothing", "[progress]") {
  double now = 0;
  std::string out;
  ProgressLine line(false, [&] { return now; }, [&](const std::string& s) { out += s; });
  now = 50;
  CHECK_FALSE(line.due());
  line.update("x");
  line.finish();
  CHECK(out.empty());
}
