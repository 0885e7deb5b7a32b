#include <catch2/catch.hpp>

#include "mna/reduce.hpp"
#include "parser/input_error.hpp"
#include "parser/netlist.hpp"
#include "pcg/direct.hpp"
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
