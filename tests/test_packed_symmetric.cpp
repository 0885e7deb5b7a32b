#include <catch2/catch.hpp>

#include <omp.h>

#include <cmath>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "grid_system.hpp"
#include "mna/packed_symmetric.hpp"
#include "pcg/pcg_cpu.hpp"

using namespace pgsim;

namespace {

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// The CSR of a dense matrix, its zeros left out.
CsrMatrix from_dense(const std::vector<std::vector<double>>& a) {
  CsrMatrix G;
  G.rows = int32_t(a.size());
  for (const auto& row : a) {
    for (size_t j = 0; j < row.size(); ++j)
      if (row[j] != 0) {
        G.col.push_back(int32_t(j));
        G.val.push_back(row[j]);
      }
    G.ptr.push_back(int32_t(G.col.size()));
  }
  return G;
}

CsrMatrix path3() { return from_dense({{2.5, -1.25, 0}, {-1.25, 4.0, -0.5}, {0, -0.5, 3.0}}); }

}  // namespace

TEST_CASE("pack_symmetric keeps each pair once, left of the diagonal", "[mna][packed]") {
  const auto P = pack_symmetric(path3());
  REQUIRE(P.has_value());
  CHECK(P->rows == 3);
  CHECK(P->diag == FillVector<double>{2.5, 4.0, 3.0});
  CHECK(P->ptr == FillVector<int32_t>{0, 0, 1, 2});
  CHECK(P->col == FillVector<int32_t>{0, 1});
  CHECK(P->val == FillVector<double>{-1.25, -0.5});
  // r = b - G x with x = (1, 2, 3): (1 - 0, 2 - 5.25, 3 - 8) = (1, -3.25, -5)
  const std::vector<double> b{1.0, 2.0, 3.0}, x{1.0, 2.0, 3.0};
  CHECK(relative_residual(*P, b, x) == Approx(std::sqrt(1.0 + 10.5625 + 25.0) / std::sqrt(14.0)));
}

TEST_CASE("pack_symmetric refuses a G the packed form does not stand for", "[mna][packed]") {
  CsrMatrix G = path3();
  SECTION("a mirror one bit off") { G.val[5] = std::nextafter(-0.5, 0.0); }
  SECTION("two mirrors swapped") {  // counts and columns agree, the values do not
    G.val[2] = -0.5;
    G.val[5] = -1.25;
  }
  SECTION("an entry without its mirror") { G = from_dense({{2.5, -1.25, -1.0}, {-1.25, 4.0, -0.5}, {0, -0.5, 3.0}}); }
  SECTION("a row without its diagonal") { G = from_dense({{0, -1.25, 0}, {-1.25, 4.0, -0.5}, {0, -0.5, 3.0}}); }
  SECTION("columns out of order") {
    std::swap(G.col[3], G.col[4]);
    std::swap(G.val[3], G.val[4]);
  }
  CHECK_FALSE(pack_symmetric(G).has_value());
}

TEST_CASE("the packed residual is relative_residual of G, the same bits for any thread count", "[mna][packed]") {
  test::GridShape shape;
  shape.nx = 300;  // 180k rows: many blocks, and vias between the layers' far apart rows
  shape.ny = 300;
  const test::GridSystem sys = test::make_grid_system(shape);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> around(0.9, 1.1);
  std::vector<double> x(sys.b.size());
  for (double& v : x) v = 1.8 * around(rng);
  const double expected = relative_residual(sys.G, sys.b, x);
  REQUIRE(expected > 0);
  const int threads = omp_get_max_threads();
  for (int t : {1, 2, 3, 8}) {
    omp_set_num_threads(t);
    const auto P = pack_symmetric(sys.G);
    REQUIRE(P.has_value());
    CHECK(int64_t(P->col.size()) == (sys.G.nnz() - sys.G.rows) / 2);
    CHECK(same_bits(relative_residual(*P, sys.b, x), expected));
  }
  omp_set_num_threads(threads);
}
