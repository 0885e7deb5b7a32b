// The CPU side of the triangular solves: the reference substitution, level sets, independent row
// blocks, colouring and reordering, and IC(0) (the factor and IC(0)-PCG on ibmpg1).
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>

#include "app/compare.hpp"
#include "app/voltage_file.hpp"
#include "cmg/galerkin.hpp"
#include "pcg/ic0.hpp"
#include "pcg/jacobi.hpp"
#include "pcg/pcg_cpu.hpp"
#include "triangles.hpp"

using namespace pgsim;
using test::Shape;

namespace {

const Shape kShapes[] = {Shape::chain, Shape::wide, Shape::dense, Shape::empty_runs};

// The rows row i of T depends on (its off-diagonal columns).
std::vector<int32_t> dependencies(const CsrMatrix& T, int32_t i) {
  std::vector<int32_t> d;
  for (int32_t k = T.ptr[i]; k < T.ptr[i + 1]; ++k)
    if (T.col[k] != i) d.push_back(T.col[k]);
  return d;
}

// Entry (i, j) of A, or 0 when not stored.
double entry(const CsrMatrix& A, int32_t i, int32_t j) {
  auto first = A.col.begin() + A.ptr[i], last = A.col.begin() + A.ptr[i + 1];
  auto it = std::lower_bound(first, last, j);
  return it != last && *it == j ? A.val[static_cast<size_t>(it - A.col.begin())] : 0.0;
}

// max over the stored entries of G of |(L L^T)(i,j) - G(i,j)| / G(i,i).
double ic0_pattern_error(const CsrMatrix& G, const CsrMatrix& L) {
  double worst = 0;
  for (int32_t i = 0; i < G.rows; ++i)
    for (int32_t k = G.ptr[i]; k < G.ptr[i + 1]; ++k) {
      const int32_t j = G.col[k];
      double llt = 0;  // row i of L dot row j of L
      for (int32_t a = L.ptr[i], b = L.ptr[j]; a < L.ptr[i + 1] && b < L.ptr[j + 1];) {
        if (L.col[a] < L.col[b]) ++a;
        else if (L.col[a] > L.col[b]) ++b;
        else llt += L.val[a++] * L.val[b++];
      }
      worst = std::max(worst, std::abs(llt - G.val[k]) / entry(G, i, i));
    }
  return worst;
}

}  // namespace

TEST_CASE("CPU triangular solve leaves a tiny residual on every shape", "[trsv]") {
  for (Shape shape : kShapes) {
    const CsrMatrix L = test::random_lower(shape, 11), U = transpose(L);
    for (auto [T, tri] : {std::pair{&L, Triangle::lower}, std::pair{&U, Triangle::upper}}) {
      INFO(test::shape_name(shape) << (tri == Triangle::lower ? " lower" : " upper"));
      REQUIRE_NOTHROW(check_triangle(*T, tri));
      const auto b = test::random_vector(static_cast<size_t>(T->rows), 5);
      std::vector<double> x(b.size()), r(b.size());
      solve_triangular(*T, tri, b.data(), x.data());
      T->multiply(x.data(), r.data());
      CHECK(test::max_relative_error(r, b) < 1e-13);
    }
  }
}

TEST_CASE("check_triangle rejects what is not a triangle", "[trsv]") {
  CsrMatrix A;  // [[2, 1], [1, 2]]
  A.rows = 2;
  A.ptr = {0, 2, 4};
  A.col = {0, 1, 0, 1};
  A.val = {2, 1, 1, 2};
  CHECK_THROWS_WITH(check_triangle(A, Triangle::lower), Catch::Contains("row 0"));
  CHECK_THROWS_WITH(check_triangle(A, Triangle::upper), Catch::Contains("row 1"));
  CsrMatrix Z;  // [[0]]
  Z.rows = 1;
  Z.ptr = {0, 1};
  Z.col = {0};
  Z.val = {0};
  CHECK_THROWS_WITH(check_triangle(Z, Triangle::lower), Catch::Contains("nonzero diagonal"));
}

TEST_CASE("level sets are valid and minimal", "[trsv]") {
  for (Shape shape : kShapes) {
    const CsrMatrix L = test::random_lower(shape, 3), U = transpose(L);
    for (auto [T, tri] : {std::pair{&L, Triangle::lower}, std::pair{&U, Triangle::upper}}) {
      INFO(test::shape_name(shape) << (tri == Triangle::lower ? " lower" : " upper"));
      const LevelSets s = level_sets(*T, tri);
      std::vector<int32_t> level(static_cast<size_t>(T->rows), -1);
      for (int32_t l = 0; l < s.count(); ++l)
        for (int32_t k = s.ptr[l]; k < s.ptr[l + 1]; ++k) {
          REQUIRE(level[s.rows[k]] == -1);  // every row once
          level[s.rows[k]] = l;
        }
      REQUIRE(std::count(level.begin(), level.end(), -1) == 0);
      for (int32_t i = 0; i < T->rows; ++i) {
        int32_t needed = 0;
        for (int32_t j : dependencies(*T, i)) needed = std::max(needed, level[j] + 1);
        REQUIRE(level[i] == needed);
      }
      if (shape == Shape::chain) CHECK(s.count() == T->rows);
      if (shape == Shape::wide) CHECK(s.count() == 8);
    }
  }
}

TEST_CASE("independent row blocks cover the rows in order and are independent", "[trsv]") {
  for (Shape shape : kShapes) {
    const CsrMatrix L = test::random_lower(shape, 4), U = transpose(L);
    for (auto [T, tri] : {std::pair{&L, Triangle::lower}, std::pair{&U, Triangle::upper}}) {
      INFO(test::shape_name(shape) << (tri == Triangle::lower ? " lower" : " upper"));
      const RowBlocks blocks = independent_blocks(*T, tri);
      int32_t next = tri == Triangle::lower ? 0 : T->rows;  // the blocks tile the rows in processing order
      for (int32_t b = 0; b < blocks.count(); ++b) {
        const int32_t lo = blocks.first[b], hi = lo + blocks.size[b];
        REQUIRE(blocks.size[b] > 0);
        REQUIRE((tri == Triangle::lower ? lo : hi) == next);
        next = tri == Triangle::lower ? hi : lo;
        for (int32_t i = lo; i < hi; ++i)
          for (int32_t j : dependencies(*T, i)) REQUIRE((j < lo || j >= hi));
      }
      REQUIRE(next == (tri == Triangle::lower ? T->rows : 0));
      if (shape == Shape::chain) CHECK(blocks.count() == T->rows);
    }
  }
}

TEST_CASE("greedy colouring is valid and colour order makes one block per colour", "[trsv][ibmpg1]") {
  for (const CsrMatrix& G : {grid_matrix(60, 40, 1), test::ibmpg1_matrix()}) {
    const std::vector<int32_t> color = greedy_coloring(G);
    const int32_t colors = *std::max_element(color.begin(), color.end()) + 1;
    for (int32_t i = 0; i < G.rows; ++i)
      for (int32_t j : dependencies(G, i)) REQUIRE(color[i] != color[j]);
    const std::vector<int32_t> order = color_order(color);
    std::vector<int32_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    std::vector<int32_t> identity(sorted.size());
    std::iota(identity.begin(), identity.end(), 0);
    REQUIRE(sorted == identity);
    REQUIRE(std::is_sorted(order.begin(), order.end(), [&](int32_t a, int32_t b) { return color[a] < color[b]; }));
    // B = P G P^T: B(i, j) == G(order[i], order[j]) on a sample of entries, and the factor of B
    // has exactly one independent block per colour.
    const CsrMatrix B = permute_symmetric(G, inverse_permutation(order));
    REQUIRE(B.nnz() == G.nnz());
    for (int32_t i = 0; i < B.rows; i += 97)
      for (int32_t k = B.ptr[i]; k < B.ptr[i + 1]; ++k) REQUIRE(B.val[k] == entry(G, order[i], order[B.col[k]]));
    const Ic0Factor f = ic0_factor(B);
    CHECK(independent_blocks(f.L, Triangle::lower).count() == colors);
    CHECK(independent_blocks(f.Lt, Triangle::upper).count() <= colors);  // merges runs that happen to be independent
    if (G.rows == 60 * 40) CHECK(colors == 2);  // the grid is bipartite: red-black
  }
}

TEST_CASE("IC(0): L L^T equals G on the pattern of G", "[ic0][ibmpg1]") {
  for (const CsrMatrix& G : {grid_matrix(50, 70, 2), test::ibmpg1_matrix()}) {
    const Ic0Factor f = ic0_factor(G);
    REQUIRE_NOTHROW(check_triangle(f.L, Triangle::lower));
    REQUIRE_NOTHROW(check_triangle(f.Lt, Triangle::upper));
    // Same pattern as tril(G).
    int64_t lower = 0;
    for (int32_t i = 0; i < G.rows; ++i)
      for (int32_t k = G.ptr[i]; k < G.ptr[i + 1]; ++k) lower += G.col[k] <= i;
    CHECK(f.L.nnz() == lower);
    CHECK(ic0_pattern_error(G, f.L) < 1e-12);
  }
}

TEST_CASE("IC(0) fails clearly on a matrix that is not positive definite", "[ic0]") {
  CsrMatrix A;  // [[1, 2], [2, 1]]
  A.rows = 2;
  A.ptr = {0, 2, 4};
  A.col = {0, 1, 0, 1};
  A.val = {1, 2, 2, 1};
  CHECK_THROWS_WITH(ic0_factor(A), Catch::Contains("row 1"));
}

TEST_CASE("IC(0)-PCG solves ibmpg1 to 1e-10 within 1e-6 V of the reference", "[ic0][ibmpg1]") {
  const Netlist nl = parse_netlist(test::shared_data("ibmpg1.spice"));
  const ReducedSystem sys = reduce(nl);
  SolveControl control;
  control.tolerance = 1e-10;
  std::vector<double> x(static_cast<size_t>(sys.unknowns()), 0.0), xj = x;
  const SolveResult r = pcg_cpu(sys.G, sys.b, x, Ic0Preconditioner(sys.G), control);
  const SolveResult rj = pcg_cpu(sys.G, sys.b, xj, JacobiPreconditioner(sys.G), control);
  WARN("IC(0)-PCG on ibmpg1: " << r.iterations << " iterations (Jacobi: " << rj.iterations << ")");
  REQUIRE(r.converged);
  CHECK(r.relative_residual <= 1e-10);
  CHECK(r.iterations < rj.iterations / 2);
  const Comparison c = compare_voltages(nl, node_voltages(sys, x), match_reference(nl, read_voltages(test::shared_data("ibmpg1.solution"))));
  CHECK(c.matched == 30635);
  CHECK(c.max_abs_error <= 1e-6);
}
