#include <omp.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <utility>

#include "grid_system.hpp"
#include "mna/csr.hpp"
#include "mna/reduce.hpp"
#include "parser/input_error.hpp"
#include "parser/netlist.hpp"
#include "pcg/direct.hpp"
#include "pcg/ldl_solve.hpp"
#include "pcg/jacobi.hpp"
#include "pcg/pcg_cpu.hpp"

using namespace pgsim;

namespace {

// Solves `text` directly and returns every node's voltage by name.
double voltage(const Netlist& nl, const std::vector<double>& v, const char* name) {
  uint32_t id = nl.node_names.find(name);
  REQUIRE(id != NameTable::npos);
  return v[id];
}

struct Solved {
  Netlist nl;
  ReducedSystem sys;
  std::vector<double> v;
};

Solved solve(const std::string& text) {
  Solved s{parse_netlist_text(text, "mem.sp"), {}, {}};
  s.sys = reduce(s.nl);
  std::vector<double> x;
  solve_direct(s.sys.G, s.sys.b, x);
  s.v = node_voltages(s.sys, x);
  return s;
}

}  // namespace

// First in this file, so that it also holds when every test case runs in one process.
TEST_CASE("CHOLMOD is opened by the first direct factorisation, not when the process starts", "[mna][direct]") {
  if (direct_solver_name() != "cholmod") SUCCEED("built without CHOLMOD");
  const auto mapped = [] {
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line))
      if (line.find("libcholmod") != std::string::npos) return true;
    return false;
  };
  CHECK_FALSE(mapped());
  CsrMatrix A;  // [2]
  A.rows = 1;
  A.ptr = {0, 1};
  A.col = {0};
  A.val = {2.0};
  std::vector<double> x;
  CHECK(solve_direct(A, {4.0}, x).converged);
  CHECK(x == std::vector<double>{2.0});
  if (direct_solver_name() == "cholmod") CHECK(mapped());
}

TEST_CASE("factor_entries: a path's Cholesky factor has no fill", "[mna][direct]") {
  // The path 0 - 1 - ... - 9: tridiagonal, so its factor holds the diagonal and one entry per link.
  CsrMatrix A;
  A.rows = 10;
  A.ptr.clear();
  A.ptr.push_back(0);
  for (int32_t i = 0; i < A.rows; ++i) {
    if (i > 0) A.col.push_back(i - 1), A.val.push_back(-1.0);
    A.col.push_back(i), A.val.push_back(3.0);
    if (i + 1 < A.rows) A.col.push_back(i + 1), A.val.push_back(-1.0);
    A.ptr.push_back(int32_t(A.col.size()));
  }
  const std::optional<int64_t> entries = factor_entries(A);
  if (direct_solver_name() == "cholmod") CHECK(entries == std::optional<int64_t>(19));
  else CHECK_FALSE(entries);
}

TEST_CASE("radix_sort_row sorts stably for every digit count", "[mna]") {
  // Largest columns of 1 (one 1-bit pass), 12 bits (one pass), 13 and 24 bits (two passes of equal
  // digits) and 31 bits (three): each column drawn several times, its entries' values numbering
  // them in input order, so an unstable sort or a lost entry changes the result.
  std::mt19937 rng(7);
  for (int32_t max_col : {1, 4095, 4096, (1 << 24) - 1, (1 << 30) + 5}) {
    const int32_t len = 20000;
    std::uniform_int_distribution<int32_t> pick(0, 300);
    std::vector<int32_t> palette(301);
    for (int32_t& c : palette) c = std::uniform_int_distribution<int32_t>(0, max_col)(rng);
    palette[0] = max_col;
    std::vector<int32_t> col(len);
    std::vector<double> val(len);
    for (int32_t i = 0; i < len; ++i) {
      col[size_t(i)] = palette[size_t(pick(rng))];
      val[size_t(i)] = i;
    }
    std::vector<std::pair<int32_t, double>> expected(len);
    for (int32_t i = 0; i < len; ++i) expected[size_t(i)] = {col[size_t(i)], val[size_t(i)]};
    std::stable_sort(expected.begin(), expected.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    radix_sort_row(col.data(), val.data(), len);
    bool same = true;
    for (int32_t i = 0; i < len; ++i) same = same && col[size_t(i)] == expected[size_t(i)].first && val[size_t(i)] == expected[size_t(i)].second;
    CHECK(same);
  }
}

TEST_CASE("voltage divider", "[mna]") {
  auto s = solve("V1 in 0 10\nR1 in mid 3k\nR2 mid 0 1k\n");
  CHECK(voltage(s.nl, s.v, "in") == Approx(10).margin(1e-12));
  CHECK(voltage(s.nl, s.v, "mid") == Approx(2.5).margin(1e-12));
  CHECK(s.sys.unknowns() == 1);
}

TEST_CASE("vias as 0 V sources and 0-ohm resistors merge nodes", "[mna]") {
  auto s = solve("V1 top 0 1.8\nR1 top a 1\nVvia a b 0\nRshort b c 0\nR2 c 0 1\n");
  CHECK(voltage(s.nl, s.v, "a") == Approx(0.9).margin(1e-12));
  CHECK(voltage(s.nl, s.v, "b") == Approx(0.9).margin(1e-12));
  CHECK(voltage(s.nl, s.v, "c") == Approx(0.9).margin(1e-12));
  CHECK(s.sys.unknowns() == 1);
}

TEST_CASE("a voltage source between two non-ground nodes", "[mna]") {
  // V2 holds b 0.5 V above a; 1 A flows in at a: a and b float together on R1 || R2.
  auto s = solve("I1 0 a 1\nV2 b a 0.5\nR1 a 0 2\nR2 b 0 2\n");
  // KCL: (va)/2 + (va + 0.5)/2 = 1 -> va = 0.75
  CHECK(voltage(s.nl, s.v, "a") == Approx(0.75).margin(1e-12));
  CHECK(voltage(s.nl, s.v, "b") == Approx(1.25).margin(1e-12));
}

TEST_CASE("a current source between two nets", "[mna]") {
  // 2 mA drawn out of 'vdd' and pushed into 'gnd1' (SPICE: current flows plus -> minus inside).
  auto s = solve("Vdd src 0 1\nR1 src vdd 10\nR2 gnd1 0 10\nI1 vdd gnd1 2m\n");
  CHECK(voltage(s.nl, s.v, "vdd") == Approx(1 - 0.02).margin(1e-12));
  CHECK(voltage(s.nl, s.v, "gnd1") == Approx(0.02).margin(1e-12));
}

TEST_CASE("capacitors are open and inductors short at DC", "[mna]") {
  auto s = solve("V1 a 0 2\nR1 a b 1\nL1 b c 1u\nR2 c 0 1\nC1 b 0 1p\nC2 a c 1n\n");
  CHECK(voltage(s.nl, s.v, "b") == Approx(1).margin(1e-12));
  CHECK(voltage(s.nl, s.v, "c") == Approx(1).margin(1e-12));
}

TEST_CASE("a floating component is reported with its size and a node", "[mna]") {
  Netlist nl = parse_netlist_text("V1 a 0 1\nR1 a 0 1\nR2 x y 1\nR3 y z 1\nI1 x z 1m\n", "mem.sp");
  CHECK_THROWS_WITH(reduce(nl), Catch::Contains("floating") && Catch::Contains("3 node") && Catch::Contains("'x'"));
}

TEST_CASE("voltage sources in a loop that disagree are reported by name", "[mna]") {
  Netlist nl = parse_netlist_text("V1 a 0 1\nV2 b a 1\nV3 b 0 3\nR1 b 0 1\n", "mem.sp");
  CHECK_THROWS_WITH(reduce(nl), Catch::Contains("'V1'") && Catch::Contains("'V2'") && Catch::Contains("'V3'") &&
                                    Catch::Contains("mem.sp:3"));
}

TEST_CASE("sources in a loop that agree are accepted", "[mna]") {
  auto s = solve("V1 a 0 1\nV2 b a 1\nV3 b 0 2\nR1 b c 1\nR2 c 0 1\n");
  CHECK(voltage(s.nl, s.v, "c") == Approx(1).margin(1e-12));
}

TEST_CASE("a netlist with no sources is an error", "[mna]") {
  Netlist nl = parse_netlist_text("R1 a 0 1\n", "mem.sp");
  CHECK_THROWS_WITH(reduce(nl), Catch::Contains("no voltage or current sources"));
}

TEST_CASE("the reduced matrix is an SDD M-matrix and PCG matches the direct solve", "[mna][pcg]") {
  // A 30x30 resistor mesh with pads and loads.
  std::string text = "Vpad pad 0 1.8\n";
  const int n = 30;
  auto name = [](int i, int j) { return "n" + std::to_string(i) + "_" + std::to_string(j); };
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      if (i + 1 < n) text += "R" + name(i, j) + "x " + name(i, j) + " " + name(i + 1, j) + " 0.5\n";
      if (j + 1 < n) text += "R" + name(i, j) + "y " + name(i, j) + " " + name(i, j + 1) + " 0.7\n";
      if ((i * n + j) % 7 == 0) text += "I" + name(i, j) + " " + name(i, j) + " 0 1m\n";
      if (i % 10 == 0 && j % 10 == 0) text += "Rp" + name(i, j) + " pad " + name(i, j) + " 0.1\n";
    }
  Netlist nl = parse_netlist_text(text, "mesh.sp");
  ReducedSystem sys = reduce(nl);
  const CsrMatrix& G = sys.G;
  for (int32_t i = 0; i < G.rows; ++i) {
    double off = 0, diag = 0;
    for (int32_t k = G.ptr[i]; k < G.ptr[i + 1]; ++k) {
      if (k > G.ptr[i]) REQUIRE(G.col[k] > G.col[k - 1]);
      if (G.col[k] == i) diag = G.val[k];
      else {
        REQUIRE(G.val[k] < 0);
        off += -G.val[k];
      }
    }
    REQUIRE(diag >= off * (1 - 1e-14));
  }
  std::vector<double> xd, xp(static_cast<size_t>(G.rows), 0.0);
  solve_direct(G, sys.b, xd);
  SolveControl control;
  control.tolerance = 1e-12;
  SolveResult r = pcg_cpu(G, sys.b, xp, JacobiPreconditioner(G), control);
  CHECK(r.converged);
  CHECK(r.relative_residual <= 1e-12);
  for (size_t i = 0; i < xd.size(); ++i) REQUIRE(xp[i] == Approx(xd[i]).margin(1e-10));
}

namespace {

// A 200 x 200 mesh with everything reduce() handles: pads (sources to ground), 0-ohm shorts and
// inductors merging neighbours, sources to private nodes (super-nodes with offsets, no loops that
// could disagree), resistors and current sources across a super-node, parallel resistors, loads.
std::string mixed_grid(uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> r(0.5, 2.0);
  std::uniform_int_distribution<int> pick(0, 99);
  const int n = 200;
  auto name = [](int i, int j) { return "n" + std::to_string(i) + "_" + std::to_string(j); };
  std::string text;
  int k = 0;
  auto element = [&](char kind, const std::string& a, const std::string& b, double value) {
    char shown_value[32];  // %g: std::to_string would write 1e-9 H as 0 (a short)
    std::snprintf(shown_value, sizeof shown_value, "%.9g", value);
    text += kind + std::to_string(k++) + " " + a + " " + b + " " + shown_value + "\n";
  };
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const std::string here = name(i, j), side = "x" + std::to_string(i) + "_" + std::to_string(j);
      if (j + 1 < n) {
        const int p = pick(rng);
        element(p < 3 ? 'R' : p < 5 ? 'L' : 'R', here, name(i, j + 1), p < 3 ? 0.0 : p < 5 ? 1e-9 : r(rng));
        if (p > 95) element('R', name(i, j + 1), here, r(rng));  // a parallel resistor
      }
      if (i + 1 < n) element('R', here, name(i + 1, j), r(rng));
      const int q = pick(rng);
      if (q < 2) element('V', here, "0", 1.8);
      if (q >= 2 && q < 30) element('I', here, "0", 1e-3 * r(rng));
      if (q == 31) element('R', here, "0", 50.0);
      if (q >= 50 && q < 60) element('C', here, q < 55 ? "0" : name(i, (j + 1) % n), 1e-12 * r(rng));  // transient only
      if (q >= 40 && q < 50) {  // side sits 0.01 V below here, tied on to the next row
        element('V', here, side, 0.01);
        if (i + 1 < n) element('R', side, name(i + 1, j), r(rng));
        if (q == 41) element('R', here, side, 1.0);  // across the super-node: no current
        if (q == 42) element('I', here, side, 1e-3);
      }
    }
  return text;
}

ReducedSystem reduce_with_threads(const Netlist& nl, int threads, const Companion* companion = nullptr) {
  const int before = omp_get_max_threads();
  omp_set_num_threads(threads);
  ReducedSystem s = reduce(nl, companion);
  omp_set_num_threads(before);
  return s;
}

std::string reduce_error_with_threads(const Netlist& nl, int threads) {
  try {
    reduce_with_threads(nl, threads);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

// 3 threads: ranges of nodes and elements that split nothing evenly.
TEST_CASE("reduce() gives the same system bit for bit for 1, 2, 3 and 8 threads", "[mna]") {
  const Netlist nl = parse_netlist_text(mixed_grid(7), "mixed.sp");
  // DC, and a transient step's companion conductances (capacitors stamped, inductors not merged).
  const Companion trapezoidal{2.0 / 1e-11, 1e-11 / 2.0};
  const Companion* companion = GENERATE_REF(as<const Companion*>{}, nullptr, &trapezoidal);
  const ReducedSystem one = reduce_with_threads(nl, 1, companion);
  REQUIRE(one.unknowns() > 30000);
  if (companion) REQUIRE(one.unknowns() > reduce_with_threads(nl, 1).unknowns());  // the inductors' ends stay apart
  for (int threads : {2, 3, 8}) {
    const ReducedSystem s = reduce_with_threads(nl, threads, companion);
    CHECK(s.G.rows == one.G.rows);
    CHECK(s.G.ptr == one.G.ptr);
    CHECK(s.G.col == one.G.col);
    CHECK(std::memcmp(s.G.val.data(), one.G.val.data(), one.G.val.size() * sizeof(double)) == 0);
    CHECK(std::memcmp(s.b.data(), one.b.data(), one.b.size() * sizeof(double)) == 0);
    CHECK(s.unknown_of_node == one.unknown_of_node);
    CHECK(std::memcmp(s.offset_of_node.data(), one.offset_of_node.data(), one.offset_of_node.size() * sizeof(double)) ==
          0);
    CHECK(s.node_of_unknown == one.node_of_unknown);
  }
  // Sorted columns, the diagonal stored, symmetric: the CSR contract.
  for (int32_t i = 0; i < one.G.rows; ++i) {
    bool diagonal = false;
    for (int32_t k = one.G.ptr[i]; k < one.G.ptr[i + 1]; ++k) {
      if (k > one.G.ptr[i]) REQUIRE(one.G.col[k - 1] < one.G.col[k]);
      diagonal |= one.G.col[k] == i;
    }
    REQUIRE(diagonal);
  }
}

namespace {

// b and G's diagonal as a serial pass over the elements sums them, for a DC reduction `sys` of nl:
// every conductance's terms first, then every current source's, each in element order, a term of b
// g (o_self - o_other) even where it is a zero.
void serial_stamp(const Netlist& nl, const ReducedSystem& sys, std::vector<double>& b, std::vector<double>& diag) {
  b.assign(size_t(sys.unknowns()), 0.0);
  diag.assign(b.size(), 0.0);
  for (const Element& e : nl.elements) {
    if (e.kind != ElementKind::Resistor || !(e.value > 0)) continue;
    const double g = 1.0 / e.value;
    for (const auto& [self, other] : {std::pair{e.plus, e.minus}, std::pair{e.minus, e.plus}}) {
      const int32_t u = sys.unknown_of_node[self], v = sys.unknown_of_node[other];
      if (u < 0 || u == v) continue;
      const double o_self = sys.offset_of_node[self], o_other = sys.offset_of_node[other];
      diag[size_t(u)] += g;
      if (v >= 0) {
        b[size_t(u)] -= g * (o_self - o_other);
      } else {
        b[size_t(u)] += g * (o_other - o_self);
      }
    }
  }
  for (const Element& e : nl.elements) {
    if (e.kind != ElementKind::CurrentSource) continue;
    if (sys.unknown_of_node[e.plus] >= 0) b[size_t(sys.unknown_of_node[e.plus])] -= e.value;
    if (sys.unknown_of_node[e.minus] >= 0) b[size_t(sys.unknown_of_node[e.minus])] += e.value;
  }
}

// A 150 x 150 two-layer grid whose vias are 0 V sources and whose pads hold 1.2 V: no node with an
// unknown is offset from its super-node's first node.
std::string via_grid() {
  const int n = 150;
  std::string text = "Vdd vdd 0 1.2\n";
  auto name = [](int layer, int i, int j) {
    return "n" + std::to_string(layer) + "_" + std::to_string(i) + "_" + std::to_string(j);
  };
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const std::string id = std::to_string(i) + "_" + std::to_string(j);
      for (int layer : {1, 2}) {
        if (layer == 1 ? j + 1 < n : i + 1 < n)
          text += "R" + std::to_string(layer) + "_" + id + " " + name(layer, i, j) + " " +
                  (layer == 1 ? name(1, i, j + 1) : name(2, i + 1, j)) + " " + std::to_string(0.5 + 0.01 * ((i + j) % 7)) + "\n";
      }
      if ((i + j) % 3 == 0) text += "V" + id + " " + name(1, i, j) + " " + name(2, i, j) + " 0\n";
      if (i % 20 == 0 && j % 20 == 0) text += "Rp" + id + " vdd " + name(2, i, j) + " 0.05\n";
      if ((i * n + j) % 5 == 0) text += "I" + id + " " + name(1, i, j) + " 0 " + std::to_string(1e-4 * (1 + j % 3)) + "\n";
    }
  return text;
}

}  // namespace

// reduce() skips the terms of b that are zeros when no node with an unknown has an offset: the
// same bits as summing every term, with offsets (mixed_grid) and without (via_grid).
TEST_CASE("reduce()'s b and diagonal are those of a serial pass over the elements, bit for bit", "[mna]") {
  const std::string text = GENERATE(mixed_grid(11), via_grid());
  const Netlist nl = parse_netlist_text(text, "grid.sp");
  for (int threads : {1, 3}) {
    const ReducedSystem sys = reduce_with_threads(nl, threads);
    REQUIRE(sys.unknowns() > 20000);
    std::vector<double> b, diag;
    serial_stamp(nl, sys, b, diag);
    CHECK(std::memcmp(sys.b.data(), b.data(), b.size() * sizeof(double)) == 0);
    size_t diagonals = 0;
    for (int32_t i = 0; i < sys.G.rows; ++i)
      for (int32_t k = sys.G.ptr[i]; k < sys.G.ptr[i + 1]; ++k)
        if (sys.G.col[k] == i) diagonals += std::memcmp(&sys.G.val[k], &diag[size_t(i)], sizeof(double)) == 0;
    CHECK(diagonals == diag.size());
    // Offsets change b where they are not zeros.
    size_t offset_nodes = 0;
    for (size_t v = 0; v < sys.offset_of_node.size(); ++v)
      offset_nodes += sys.unknown_of_node[v] >= 0 && sys.offset_of_node[v] != 0;
    CHECK((offset_nodes > 0) == (text != via_grid()));
  }
}

// Super-nodes whose nodes lie in every thread's range of nodes: three chains of voltage sources,
// each over a third of the nodes (from node 0's, n/3's and 2n/3's range up), linked in a shuffled
// order, so that the threads owning the chains' first nodes find most of their nodes in other
// threads' ranges, and each node's offset sums many rounded differences.
TEST_CASE("super-nodes across the threads' ranges of nodes: offsets bit for bit for 1, 2, 3 and 8 threads", "[mna]") {
  const int n = 30000;
  std::string text;
  for (int k = 0; k < n; ++k) text += "R" + std::to_string(k) + " a" + std::to_string(k) + " 0 1k\n";
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> volts(-0.37, 0.37);
  std::vector<std::vector<int>> chains(3);
  for (int k = 0; k < n; ++k) {
    const int c = k % 3;
    if (k >= c * n / 3) chains[size_t(c)].push_back(k);
  }
  // forced[k]: v(a_k) - v(a_j) of the source from a_k to the chain's next node a_j.
  std::vector<std::pair<int, int>> links;
  std::vector<double> forced;
  for (std::vector<int>& chain : chains) {
    std::shuffle(chain.begin(), chain.end(), rng);
    for (size_t i = 0; i + 1 < chain.size(); ++i) {
      links.push_back({chain[i], chain[i + 1]});
      forced.push_back(volts(rng));
      text += "V" + std::to_string(links.size()) + " a" + std::to_string(chain[i]) + " a" + std::to_string(chain[i + 1]) +
              " " + std::to_string(forced.back()) + "\n";
    }
  }
  text += "I1 a0 0 1m\n";
  const Netlist nl = parse_netlist_text(text, "chains.sp");
  const ReducedSystem one = reduce_with_threads(nl, 1);
  // The three chains and every node below a chain's range (k % 3 = 1 below n/3, = 2 below 2n/3).
  REQUIRE(one.unknowns() == int32_t(3 + n - chains[0].size() - chains[1].size() - chains[2].size()));
  for (size_t i = 0; i < links.size(); ++i) {
    const uint32_t a = nl.node_names.find("a" + std::to_string(links[i].first));
    const uint32_t b = nl.node_names.find("a" + std::to_string(links[i].second));
    REQUIRE(one.unknown_of_node[a] == one.unknown_of_node[b]);
    REQUIRE(std::abs(one.offset_of_node[a] - one.offset_of_node[b] - std::stod(std::to_string(forced[i]))) < 1e-9);
  }
  // Unknowns in the order of their first nodes, each node's unknown its first node's (the chains'
  // first nodes lie in other blocks of nodes than most of their nodes).
  for (int32_t u = 0; u < one.unknowns(); ++u) {
    REQUIRE(one.unknown_of_node[one.node_of_unknown[size_t(u)]] == u);
    if (u > 0) REQUIRE(one.node_of_unknown[size_t(u) - 1] < one.node_of_unknown[size_t(u)]);
  }
  for (uint32_t v = 1; v < nl.node_count(); ++v) {
    const int32_t u = one.unknown_of_node[v];
    REQUIRE(u >= 0);
    REQUIRE(one.node_of_unknown[size_t(u)] <= v);
  }
  for (int threads : {2, 3, 8}) {
    const ReducedSystem s = reduce_with_threads(nl, threads);
    CHECK(s.unknown_of_node == one.unknown_of_node);
    CHECK(std::memcmp(s.offset_of_node.data(), one.offset_of_node.data(), one.offset_of_node.size() * sizeof(double)) ==
          0);
    CHECK(s.node_of_unknown == one.node_of_unknown);
    CHECK(std::memcmp(s.G.val.data(), one.G.val.data(), one.G.val.size() * sizeof(double)) == 0);
    CHECK(std::memcmp(s.b.data(), one.b.data(), one.b.size() * sizeof(double)) == 0);
  }
}

TEST_CASE("reduce() names the same floating part for any thread count", "[mna]") {
  // Three floating parts; the one holding the lowest unknown is named, as a serial search would:
  // 'f1' (first in node order), 4 nodes ('f2' and 'f3' one super-node).
  const std::string text = "R9001 f1 f2 1\nV9002 f2 f3 0.1\nR9003 f3 f4 1\nI9004 f1 0 1m\nR9005 g1 g2 1\n" +
                           mixed_grid(3) + "R9006 h1 h2 1\n";
  const Netlist nl = parse_netlist_text(text, "mixed.sp");
  const std::string expected =
      "floating part of the circuit: 4 node(s), among them 'f1', have no resistive path to ground or to a voltage source";
  for (int threads : {1, 2, 3, 8}) CHECK(reduce_error_with_threads(nl, threads) == expected);
}

TEST_CASE("reduce() names the first disagreeing loop in element order for any thread count", "[mna]") {
  // Two disagreeing loops: a1-a2 (the first nodes, merged by the first thread) closes last, b1-b2
  // (the last nodes, merged by the last thread) closes first: a serial pass names Vb2 and Vb1.
  const std::string text =
      "Va1 a1 a2 0.5\n" + mixed_grid(5) + "Vb1 b1 b2 0.3\nRb b1 0 1\nVb2 b1 b2 0.4\nVa2 a1 a2 0.6\n";
  const Netlist nl = parse_netlist_text(text, "mixed.sp");
  const std::string serial = reduce_error_with_threads(nl, 1);
  CHECK_THAT(serial, Catch::Contains("'Vb2'") && Catch::Contains("'Vb1'") && !Catch::Contains("'Va2'"));
  for (int threads : {2, 3, 8}) CHECK(reduce_error_with_threads(nl, threads) == serial);
}

TEST_CASE("keep_merging_names keeps the names of voltage sources and shorts, and reduce() reports the same", "[mna]") {
  const std::string text = "Va1 a1 a2 0.5\n" + mixed_grid(5) + "Rs b1 b3 0\nLs b3 b2 1n\nVb1 b1 b2 0.3\nRb b1 0 1\n" +
                           "Vb2 b1 b2 0.4\nVa2 a1 a2 0.6\n";
  const Netlist full = parse_netlist_text(text, "mixed.sp");
  const std::string expected = reduce_error_with_threads(full, 1);
  // The loop Vb1, Ls, Rs (a source, an inductor and a short) closes first.
  CHECK_THAT(expected, Catch::Contains("'Vb1' (mixed.sp:") && Catch::Contains("'Ls' (mixed.sp:") &&
                           Catch::Contains("'Rs' (mixed.sp:"));
  Netlist nl = parse_netlist_text(text, "mixed.sp");
  const MergingElements found = merging_elements(nl, nullptr);
  keep_merging_names(nl, found);
  std::vector<uint32_t> merging;  // voltage sources, 0-ohm resistors and (DC) inductors
  for (uint32_t k = 0; k < full.elements.size(); ++k) {
    const Element& e = full.elements[k];
    if (e.kind == ElementKind::VoltageSource || e.kind == ElementKind::Inductor ||
        (e.kind == ElementKind::Resistor && e.value == 0))
      merging.push_back(k);
  }
  REQUIRE(merging.size() >= 5);
  REQUIRE(std::vector<uint32_t>(nl.named_elements.begin(), nl.named_elements.end()) == merging);
  CHECK(nl.element_names.size() == merging.size());
  for (uint32_t k : merging) CHECK(nl.element_name(k) == full.element_names[k]);
  for (int threads : {1, 2, 3, 8}) CHECK(reduce_error_with_threads(nl, threads) == expected);
  // reduce() given the list found for the names reports the same loop.
  REQUIRE(std::vector<uint32_t>(found.elements.begin(), found.elements.end()) == merging);
  CHECK_THROWS_WITH(reduce(nl, nullptr, found), expected);
}

TEST_CASE("keep_element_names thins names already thinned (a reader's dc_names_only) to a subset of them", "[mna]") {
  const std::string text = "V1 a 0 1.8\nR1 a b 1\nR1 b 0 1\nV2 b c 0\nR2 c 0 0\nV3 a c 1\n";
  Netlist nl = parse_netlist_text(text, "t.sp");
  nl.keep_element_names({0, 2, 3, 4, 5});  // as the GPU reader leaves it: the merging ones and the second R1
  CHECK(nl.element_name(2) == "R1");
  keep_merging_names(nl, merging_elements(nl, nullptr));
  REQUIRE(nl.names_thinned);
  REQUIRE(std::vector<uint32_t>(nl.named_elements.begin(), nl.named_elements.end()) == std::vector<uint32_t>{0, 3, 4, 5});
  REQUIRE(nl.element_names.size() == 4);
  CHECK(nl.element_name(0) == "V1");
  CHECK(nl.element_name(3) == "V2");
  CHECK(nl.element_name(4) == "R2");
  CHECK(nl.element_name(5) == "V3");
  CHECK_THROWS_WITH(reduce(nl, nullptr), Catch::Contains("'V3' (t.sp:6), 'R2' (t.sp:5), 'V1' (t.sp:1)"));
  // The same list again changes nothing; a name no longer held is a caller's error.
  nl.keep_element_names({0, 3, 4, 5});
  CHECK(nl.element_name(4) == "R2");
  CHECK_THROWS_AS(nl.keep_element_names({1}), std::logic_error);
}

TEST_CASE("the factorisation's own solve (LdlSolve) matches CHOLMOD's on one thread and on several", "[direct]") {
  // A long two-layer strip: 19,200 unknowns, a simplicial factor of 160,707 entries (ibmpg1t's
  // step system has 164,688), enough for 8 threads' shares. A square grid this size would get a
  // supernodal factor, which CHOLMOD solves itself.
  test::GridShape shape;
  shape.nx = 600, shape.ny = 16;
  const test::GridSystem grid = test::make_grid_system(shape);
  if (direct_solver_name() != "cholmod") SUCCEED("built without CHOLMOD: the factor is Eigen's, solved by Eigen");
  DirectFactor reference(grid.G, 1, true);  // cholmod_solve2
  std::vector<double> x_ref(grid.b.size()), x(grid.b.size());
  reference.solve(grid.b.data(), x_ref.data());
  const double scale = *std::max_element(x_ref.begin(), x_ref.end());
  for (int threads : {1, 4, 8}) {
    DirectFactor own(grid.G, threads);
    if (direct_solver_name() == "cholmod") CHECK(own.threads() == threads);  // the tree splits that far
    for (int repeat = 0; repeat < 2; ++repeat) {  // the second solve reuses the workspace
      std::fill(x.begin(), x.end(), 0.0);
      own.solve(grid.b.data(), x.data());
      for (size_t i = 0; i < x.size(); ++i) REQUIRE(std::abs(x[i] - x_ref[i]) <= 1e-13 * scale);
    }
  }
  // Below LdlSolve::kMinThreads, one thread.
  CHECK(DirectFactor(grid.G, LdlSolve::kMinThreads - 1).threads() == 1);
}
