// --export-system (issue 9): the files read back bit for bit, and solving the read-back system
// reproduces pgsim's voltages.
#include <catch2/catch.hpp>

#include <cstring>
#include <sstream>

#include "app/exit_codes.hpp"
#include "mna/matrix_market.hpp"
#include "mna/reduce.hpp"
#include "parser/input_error.hpp"
#include "parser/netlist.hpp"
#include "pcg/direct.hpp"
#include "test_util.hpp"

using namespace pgsim;

namespace {

// A two-layer grid: a coarse top layer fed by pads, vias as 0 V sources and 0-ohm resistors
// (super-nodes), a 0.1 V source between two nets (a super-node whose nodes differ in voltage),
// loads, and values with long mantissas (so a lossy number format would show).
std::string layered_grid(int n) {
  auto name = [](int layer, int i, int j) {
    return "n" + std::to_string(layer) + "_" + std::to_string(i) + "_" + std::to_string(j);
  };
  std::string text = "* generated\n";
  int id = 0;
  auto element = [&](char letter, const std::string& a, const std::string& b, double value) {
    char number[32];
    std::snprintf(number, sizeof number, "%.17g", value);
    text += letter + std::to_string(id++) + " " + a + " " + b + " " + number + "\n";
  };
  for (int layer = 1; layer <= 2; ++layer)
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        const double r = layer == 1 ? 0.1 / 3 : 1.0 / 7;
        if (i + 1 < n) element('R', name(layer, i, j), name(layer, i + 1, j), r * (1 + 1e-3 * j));
        if (j + 1 < n) element('R', name(layer, i, j), name(layer, i, j + 1), r * (1 + 1e-3 * i));
        if (layer == 1 && (i * n + j) % 3 == 0) element('I', name(1, i, j), "0", 1e-3 / 3 * (1 + i % 5));
      }
  for (int i = 0; i < n; i += 4)
    for (int j = 0; j < n; j += 4) {
      element('V', name(2, i, j) + "_via", name(1, i, j), 0.0);
      element('R', name(2, i, j), name(2, i, j) + "_via", 0.0);
    }
  element('V', "pad", "0", 1.8);
  for (int i = 0; i < n; i += 8) element('R', "pad", name(2, 0, i), 0.01);
  // A super-node away from ground whose first node is 0.1 V above the node the union-find roots it at.
  element('V', name(2, n - 1, n - 1), name(2, n - 1, n - 1) + "_lo", 0.1);
  element('R', name(2, n - 1, n - 1) + "_lo", name(2, n - 2, n - 1), 0.02);
  return text;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

TEST_CASE("an exported system reads back bit for bit and solves to pgsim's voltages", "[export]") {
  test::TempDir dir;
  const std::string netlist = dir.write("grid.sp", layered_grid(24));
  const std::string prefix = dir.file("sys");
  REQUIRE(test::run_pgsim(netlist + " --export-system " + prefix + " --export-only", dir.file("log")) == kExitOk);
  CHECK_FALSE(std::filesystem::exists(dir.file("v.txt")));

  // What pgsim computes, in process: the same parse and reduction.
  const Netlist nl = parse_netlist(netlist);
  const ReducedSystem sys = reduce(nl);
  REQUIRE(sys.unknowns() > 500);

  const CsrMatrix G = read_matrix_market_symmetric(prefix + ".G.mtx");
  const std::vector<double> b = read_matrix_market_column(prefix + ".b.mtx");
  REQUIRE(G.rows == sys.G.rows);
  REQUIRE(G.ptr == sys.G.ptr);
  REQUIRE(G.col == sys.G.col);
  for (size_t k = 0; k < G.val.size(); ++k) REQUIRE(same_bits(G.val[k], sys.G.val[k]));
  REQUIRE(b.size() == sys.b.size());
  for (size_t i = 0; i < b.size(); ++i) REQUIRE(same_bits(b[i], sys.b[i]));

  // Line k of nodes.txt names the node whose voltage unknown k is.
  std::istringstream names(test::read_text(prefix + ".nodes.txt"));
  std::vector<std::string> node_of_unknown;
  for (std::string line; std::getline(names, line);) node_of_unknown.push_back(line);
  REQUIRE(node_of_unknown.size() == size_t(sys.unknowns()));

  std::vector<double> x_read, x_pgsim;
  REQUIRE(solve_direct(G, b, x_read).converged);
  REQUIRE(solve_direct(sys.G, sys.b, x_pgsim).converged);
  const std::vector<double> v = node_voltages(sys, x_pgsim);
  bool saw_offset_supernode = false;
  for (int32_t k = 0; k < sys.unknowns(); ++k) {
    const uint32_t node = nl.node_names.find(node_of_unknown[k]);
    REQUIRE(node != NameTable::npos);
    REQUIRE(x_read[k] == Approx(v[node]).margin(1e-12));
    saw_offset_supernode |= node_of_unknown[k] == "n2_23_23";
  }
  CHECK(saw_offset_supernode);
  CHECK(sys.unknown_of_node[nl.node_names.find("n2_23_23_lo")] == sys.unknown_of_node[nl.node_names.find("n2_23_23")]);
  CHECK(v[nl.node_names.find("n2_23_23")] - v[nl.node_names.find("n2_23_23_lo")] == Approx(0.1).margin(1e-12));
}

TEST_CASE("MatrixMarket round trips of awkward values", "[export]") {
  test::TempDir dir;
  const double third = 1.0 / 3, tiny = 4.9406564584124654e-324, big = 1.7976931348623157e308;
  CsrMatrix A;  // symmetric, both triangles stored, as reduce() makes it
  A.rows = 3;
  A.ptr = {0, 2, 4, 5};
  A.col = {0, 1, 0, 1, 2};
  A.val = {big, -third, -third, 0.1 + 0.2, tiny};
  std::string text;
  write_matrix_market(A, [&](std::string_view s) { text += s; });
  const std::string path = dir.write("a.mtx", text);
  CsrMatrix B = read_matrix_market_symmetric(path);
  CHECK(B.ptr == A.ptr);
  CHECK(B.col == A.col);
  for (size_t k = 0; k < A.val.size(); ++k) CHECK(same_bits(A.val[k], B.val[k]));

  std::vector<double> column = {third, -tiny, big, 0.0, 123456789.123456789};
  text.clear();
  write_matrix_market(column, [&](std::string_view s) { text += s; });
  std::vector<double> back = read_matrix_market_column(dir.write("b.mtx", text));
  REQUIRE(back.size() == column.size());
  for (size_t i = 0; i < column.size(); ++i) CHECK(same_bits(column[i], back[i]));

  CHECK_THROWS_AS(read_matrix_market_symmetric(dir.write("bad.mtx", "%%MatrixMarket matrix array real general\n1 1\n1\n")),
                  InputError);
  CHECK_THROWS_WITH(read_matrix_market_column(dir.write("short.mtx", "%%MatrixMarket matrix array real general\n3 1\n1\n2\n")),
                    Catch::Contains("short.mtx:4: ends after 2 values"));
}

TEST_CASE("export-only needs --export-system and writes no voltages", "[export]") {
  test::TempDir dir;
  const std::string net = dir.write("a.sp", "V1 a 0 1\nR1 a b 1\nR2 b 0 1\n");
  CHECK(test::run_pgsim(net + " --export-only", dir.file("log")) == kExitInput);
  CHECK(test::run_pgsim(net + " --export-system " + dir.file("p") + " --export-only -o " + dir.file("v.txt"),
                        dir.file("log")) == kExitInput);
  CHECK(test::run_pgsim(net + " --export-system " + dir.file("missing/p"), dir.file("log")) == kExitSystem);
  CHECK_THAT(test::read_text(dir.file("log")), Catch::Contains("missing/p.G.mtx"));
  // With a solve: the export and the voltages both.
  REQUIRE(test::run_pgsim(net + " --export-system " + dir.file("p") + " -o " + dir.file("v.txt"), dir.file("log")) ==
          kExitOk);
  CHECK(test::read_text(dir.file("p.nodes.txt")) == "b\n");
  CHECK(test::read_text(dir.file("p.b.mtx")) == "%%MatrixMarket matrix array real general\n1 1\n1\n");
  CHECK(test::read_text(dir.file("p.G.mtx")) == "%%MatrixMarket matrix coordinate real symmetric\n1 1 1\n1 1 2\n");
  CHECK(std::filesystem::exists(dir.file("v.txt")));
}
