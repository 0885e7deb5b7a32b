#include <catch2/catch.hpp>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "app/run.hpp"
#include "grid_system.hpp"
#include "mna/chain_elimination.hpp"
#include "mna/reduce.hpp"
#include "parser/netlist.hpp"
#include "pcg/direct.hpp"
#include "pcg/pcg_cpu.hpp"
#include "test_util.hpp"

using namespace pgsim;

namespace {

// Symmetric, non-positive off-diagonals, diagonally dominant: an SDD M-matrix.
void check_sdd_m_matrix(const CsrMatrix& G) {
  int bad = 0;
  for (int32_t i = 0; i < G.rows; ++i) {
    double diag = 0, off = 0;
    for (int32_t k = G.ptr[i]; k < G.ptr[i + 1]; ++k) {
      const int32_t j = G.col[k];
      if (k > G.ptr[i] && G.col[k - 1] >= j) ++bad;
      if (j == i) {
        diag = G.val[k];
        continue;
      }
      if (G.val[k] > 0) ++bad;
      off -= G.val[k];
      bool mirrored = false;
      for (int32_t q = G.ptr[j]; q < G.ptr[j + 1]; ++q) mirrored |= G.col[q] == i && G.val[q] == G.val[k];
      if (!mirrored) ++bad;
    }
    if (diag < off * (1 - 1e-14)) ++bad;
  }
  CHECK(bad == 0);
}

// The eliminated system solved directly and recovered equals the direct solve of the whole one.
void check_exact(const CsrMatrix& G, const std::vector<double>& b) {
  const EliminatedSystem e = eliminate_chains(G, b);
  check_sdd_m_matrix(e.G);
  CHECK(e.G.rows + e.eliminated() == G.rows);
  std::vector<double> full, kept;
  solve_direct(G, b, full);
  if (e.G.rows > 0) solve_direct(e.G, e.b, kept);
  const std::vector<double> recovered = e.recover(kept);
  double scale = 0;
  for (double v : full) scale = std::max(scale, std::fabs(v));
  CHECK(test::max_abs_difference(recovered, full) <= 1e-11 * scale);
  CHECK(relative_residual(G, b, recovered) <= 1e-12);
}

// pad - n1 - n2 - ... - n5, loads along the way: all unknowns have at most two neighbours.
ReducedSystem chain_system() {
  const Netlist nl = parse_netlist_text(
      "V1 pad 0 1.8\nR0 pad n1 0.5\nR1 n1 n2 1\nR2 n2 n3 2\nR3 n3 n4 1\nR4 n4 n5 3\n"
      "I1 n2 0 10m\nI2 n5 0 20m\nR5 n3 0 100\n",
      "chain.sp");
  ReducedSystem sys = reduce(nl);
  REQUIRE(sys.unknowns() == 5);
  return sys;
}

}  // namespace

TEST_CASE("a wire chain is eliminated completely and recovered exactly", "[chains]") {
  const ReducedSystem sys = chain_system();
  const EliminatedSystem e = eliminate_chains(sys.G, sys.b);
  CHECK(e.eliminated() == 5);
  CHECK(e.G.rows == 0);
  const std::vector<double> x = e.recover({});
  std::vector<double> reference;
  solve_direct(sys.G, sys.b, reference);
  CHECK(test::max_abs_difference(x, reference) <= 1e-14);
}

TEST_CASE("chain elimination of grids is exact and leaves an SDD M-matrix", "[chains]") {
  for (int32_t via_stride : {1, 2, 3}) {
    test::GridShape shape;
    shape.nx = 40;
    shape.ny = 30;
    shape.via_stride = via_stride;
    shape.pad_stride = 7;
    const test::GridSystem sys = test::make_grid_system(shape);
    INFO("via stride " << via_stride);
    check_exact(sys.G, sys.b);
  }
  // Stride 1: every node has a via and wire neighbours on both sides, except the wire ends.
  test::GridShape dense;
  dense.nx = dense.ny = 20;
  dense.via_stride = 1;
  const test::GridSystem sys = test::make_grid_system(dense);
  CHECK(eliminate_chains(sys.G, sys.b).eliminated() == 2 * 2 * 20);
}

TEST_CASE("pinned rows are never eliminated, the rest stays exact", "[chains]") {
  // The chain of the first case with n3 pinned (as a row coupled to another rank would be): n3
  // stays, n1, n2, n4, n5 go, and the kept system solves to the whole system's voltages.
  const ReducedSystem sys = chain_system();
  std::vector<uint8_t> pinned(5, 0);
  pinned[2] = 1;  // n3
  const EliminatedSystem e = eliminate_chains(sys.G, sys.b, &pinned);
  REQUIRE(e.G.rows == 1);
  CHECK(e.kept == std::vector<int32_t>{2});
  CHECK(e.eliminated() == 4);
  for (const auto& s : e.steps) CHECK(s.v != 2);
  std::vector<double> kept, reference;
  solve_direct(e.G, e.b, kept);
  solve_direct(sys.G, sys.b, reference);
  CHECK(test::max_abs_difference(e.recover(kept), reference) <= 1e-14);

  // A grid with every fourth row pinned: those rows are all kept, and the result is exact.
  test::GridShape shape;
  shape.nx = 40;
  shape.ny = 30;
  shape.via_stride = 3;
  const test::GridSystem grid = test::make_grid_system(shape);
  std::vector<uint8_t> every_fourth(size_t(grid.G.rows), 0);
  for (size_t v = 0; v < every_fourth.size(); v += 4) every_fourth[v] = 1;
  const EliminatedSystem g = eliminate_chains(grid.G, grid.b, &every_fourth);
  CHECK(g.eliminated() > 0);
  for (const auto& s : g.steps) CHECK(every_fourth[size_t(s.v)] == 0);
  std::vector<double> full, small;
  solve_direct(grid.G, grid.b, full);
  solve_direct(g.G, g.b, small);
  CHECK(test::max_abs_difference(g.recover(small), full) <= 1e-11);
}

namespace {

// A matrix's values (a FillVector) or a vector of doubles.
template <class A, class B>
bool same_bits(const A& a, const B& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

// eliminate_chains (reading G, and in a copy of G's own arrays) and recover on 1, 2 and 8 threads:
// the same unknowns eliminated, the same steps, schedule, kept system and recovered voltages, bit
// for bit. Returns the 1-thread result.
EliminatedSystem check_thread_independent(const CsrMatrix& G, const std::vector<double>& b,
                                          const std::vector<uint8_t>* pinned = nullptr) {
  const int threads_before = omp_get_max_threads();
  // Any kept solution will do: the recovery's arithmetic is what is compared.
  auto recovered = [](const EliminatedSystem& e) {
    std::vector<double> x_kept(size_t(e.G.rows));
    for (size_t k = 0; k < x_kept.size(); ++k) x_kept[k] = 1.8 - 1e-4 * double(k % 89);
    return e.recover(x_kept);
  };
  omp_set_num_threads(1);
  EliminatedSystem one = eliminate_chains(G, b, pinned);
  const std::vector<double> x_one = recovered(one);
  auto check_same = [&](const EliminatedSystem& e) {
    CHECK(e.G.rows == one.G.rows);
    CHECK(e.G.ptr == one.G.ptr);
    CHECK(e.G.col == one.G.col);
    CHECK(same_bits(e.G.val, one.G.val));
    CHECK(same_bits(e.b, one.b));
    CHECK(e.kept == one.kept);
    CHECK(e.group_ptr == one.group_ptr);
    CHECK(e.level_ptr == one.level_ptr);
    REQUIRE(e.steps.size() == one.steps.size());
    CHECK(std::memcmp(e.steps.data(), one.steps.data(), one.steps.size() * sizeof(EliminatedSystem::Step)) == 0);
    CHECK(same_bits(recovered(e), x_one));
  };
  for (int threads : {1, 2, 8}) {
    INFO("threads " << threads);
    omp_set_num_threads(threads);
    if (threads > 1) check_same(eliminate_chains(G, b, pinned));
    CsrMatrix own = G;  // eliminated in its own arrays: the same result, own left empty
    check_same(eliminate_chains(std::move(own), b, pinned));
    CHECK(own.rows == 0);
    CHECK(own.nnz() == 0);
  }
  omp_set_num_threads(threads_before);
  return one;
}

}  // namespace

TEST_CASE("chain elimination gives the same system, steps and recovery bit for bit for 1, 2 and 8 threads", "[chains]") {
  // 2 x 600 x 600 crossings, vias every third row and column: wire chains between hubs, and
  // arrays large enough (1 MB and more) for the parallel first touch and fills, and recovery
  // replayed in parallel (over 262,144 steps).
  test::GridShape shape;
  shape.nx = shape.ny = 600;
  shape.via_stride = 3;
  const test::GridSystem sys = test::make_grid_system(shape);
  const EliminatedSystem one = check_thread_independent(sys.G, sys.b);
  CHECK(one.eliminated() > 262144);
  CHECK(one.level_ptr.size() > 3);  // ranges at level 0 and merged ones above

  // With pinned rows (as a rank's rows coupled to another rank): every 97th row and a band of
  // rows, copied and in G's own arrays alike; none of them eliminated.
  std::vector<uint8_t> pinned(size_t(sys.G.rows), 0);
  for (size_t v = 0; v < pinned.size(); v += 97) pinned[v] = 1;
  for (size_t v = pinned.size() / 2; v < pinned.size() / 2 + 5000; ++v) pinned[v] = 1;
  const EliminatedSystem kept = check_thread_independent(sys.G, sys.b, &pinned);
  CHECK(kept.eliminated() > 200000);
  CHECK(kept.eliminated() < one.eliminated());
  CHECK(std::none_of(kept.steps.begin(), kept.steps.end(), [&](const auto& s) { return pinned[size_t(s.v)] != 0; }));
}

TEST_CASE("chains cut by the elimination's ranges are eliminated across them, exactly", "[chains]") {
  // A ring of 40,000 nodes (ten ranges or more at level 0), fed at four points, loaded and
  // leaking to ground everywhere (so the direct reference solve is accurate to ~1e-15), with six
  // chords between far nodes: every chain between chord ends crosses range boundaries (the one
  // through n0 all of them) and is eliminated partly above level 0.
  const int32_t length = 40000;
  std::string text = "V1 pad 0 1.8\n";
  for (int32_t i = 0; i < length; ++i)
    text += "R" + std::to_string(i) + " n" + std::to_string(i) + " n" + std::to_string((i + 1) % length) + " " +
            std::to_string(1 + 0.1 * (i % 7)) + "\n";
  for (int32_t i = 0; i < length; ++i)
    text += "I" + std::to_string(i) + " n" + std::to_string(i) + " 0 1m\nRl" + std::to_string(i) + " n" + std::to_string(i) + " 0 50\n";
  for (int32_t k = 0; k < 4; ++k) text += "Rp" + std::to_string(k) + " pad n" + std::to_string(k * 10007 + 3) + " 0.05\n";
  // No two chord ends adjacent along the ring, so each keeps three neighbours.
  const int32_t chords[6][2] = {{11, 20011}, {5003, 33997}, {9001, 27001}, {14007, 38001}, {23003, 31999}, {17011, 36013}};
  for (int k = 0; k < 6; ++k)
    text += "Rc" + std::to_string(k) + " n" + std::to_string(chords[k][0]) + " n" + std::to_string(chords[k][1]) + " 2\n";
  const ReducedSystem sys = reduce(parse_netlist_text(text, "wire.sp"));
  REQUIRE(sys.unknowns() == length);
  const EliminatedSystem e = check_thread_independent(sys.G, sys.b);
  // The chords' 12 ends stay; everything else goes.
  CHECK(e.G.rows == 12);
  REQUIRE(e.level_ptr.size() > 3);
  const int64_t level0_steps = e.group_ptr[size_t(e.level_ptr[1])];
  CHECK(level0_steps < e.eliminated());  // some chains were finished above level 0
  CHECK(level0_steps > e.eliminated() / 2);
  check_exact(sys.G, sys.b);
}

TEST_CASE("the whole system's residual after recovery is the same bit for bit for 1, 2 and 8 threads", "[chains]") {
  // pgsim reports it in --json (solver.relative_residual), so it must not depend on the thread count.
  test::GridShape shape;
  shape.nx = shape.ny = 200;
  const test::GridSystem sys = test::make_grid_system(shape);
  std::vector<double> x(sys.b.size());
  for (size_t i = 0; i < x.size(); ++i) x[i] = 1.8 - 1e-3 * double(i % 97);  // far from a solution: every row counts
  const int threads_before = omp_get_max_threads();
  omp_set_num_threads(1);
  const double one = relative_residual(sys.G, sys.b, x);
  REQUIRE(one > 0);
  for (int threads : {2, 8}) {
    omp_set_num_threads(threads);
    const double r = relative_residual(sys.G, sys.b, x);
    CHECK(std::memcmp(&r, &one, sizeof r) == 0);
  }
  omp_set_num_threads(threads_before);
}

TEST_CASE("chains hanging off a hub are eliminated without searching the hub", "[chains]") {
  // A hub tied to the supply with 100 two-resistor spokes, each spoke ending at a loaded node
  // with a weak leak: the spoke ends are eliminated, the middles then hang from the hub.
  std::string text = "V1 pad 0 1\nRp pad hub 0.1\n";
  for (int i = 0; i < 100; ++i) {
    const std::string s = std::to_string(i);
    text += "Ra" + s + " hub m" + s + " 1\nRb" + s + " m" + s + " e" + s + " 2\nI" + s + " e" + s + " 0 1m\n";
    text += "Rl" + s + " e" + s + " 0 1k\n";
    if (i % 2 == 0) text += "Rx" + s + " m" + s + " m" + std::to_string(i + 1) + " 5\n";
  }
  ReducedSystem sys = reduce(parse_netlist_text(text, "hub.sp"));
  REQUIRE(sys.unknowns() == 201);
  check_exact(sys.G, sys.b);
}

TEST_CASE("pgsim reports the original system's residual with and without elimination", "[chains][ibmpg1]") {
  for (bool eliminate : {true, false}) {
    Options opt;
    opt.netlist = test::shared_data("ibmpg1.spice");
    opt.compare = test::shared_data("ibmpg1.solution");
    opt.eliminate = eliminate;
    const RunReport rep = run(opt);
    CHECK((rep.eliminated > 0) == eliminate);
    CHECK(rep.result.converged);
    CHECK(rep.result.relative_residual <= 1e-10);
    REQUIRE(rep.comparison);
    CHECK(rep.comparison->max_abs_error <= 1e-6);
  }
}
