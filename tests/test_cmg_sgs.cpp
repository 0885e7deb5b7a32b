// The CMG cycle with the multicolour symmetric Gauss-Seidel smoother (--smoother sgs) on the CPU:
// the colouring, the operator (symmetric, positive definite) and PCG with it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "app/run.hpp"
#include "cmg/builder.hpp"
#include "cmg/cmg_preconditioner.hpp"
#include "grid_system.hpp"
#include "mna/reduce.hpp"
#include "parser/netlist.hpp"
#include "pcg/direct.hpp"
#include "pcg/pcg_cpu.hpp"
#include "operator_checks.hpp"
#include "test_util.hpp"

using namespace pgsim;

namespace {


CsrMatrix grid_matrix(int32_t side, int32_t via_stride) {
  test::GridShape shape;
  shape.nx = shape.ny = side;
  shape.via_stride = via_stride;
  return test::make_grid_system(shape).G;
}

CsrMatrix ibmpg1() { return reduce(parse_netlist(test::shared_data("ibmpg1.spice"))).G; }

CmgOptions sgs_options(int32_t coarse_rows, int32_t v_cycle_rows) {
  CmgOptions o;
  o.coarse_rows = coarse_rows;
  o.v_cycle_rows = v_cycle_rows;
  o.smoother = CmgSmoother::sgs;
  return o;
}

}  // namespace

TEST_CASE("sgs colours every level but the coarsest validly and keeps the levels", "[cmg][sgs][ibmpg1]") {
  for (const CsrMatrix& G : {grid_matrix(80, 2), ibmpg1()}) {
    const CmgHierarchy jacobi = build_cmg_hierarchy(G, CmgOptions{});
    const CmgHierarchy h = build_cmg_hierarchy(G, sgs_options(CmgOptions{}.coarse_rows, CmgOptions{}.v_cycle_rows));
    REQUIRE(h.smoother == CmgSmoother::sgs);
    REQUIRE(jacobi.smoother == CmgSmoother::jacobi);
    REQUIRE(h.levels.size() >= 3);
    REQUIRE(h.levels.size() == jacobi.levels.size());
    CHECK(h.level0_of_unknown == jacobi.level0_of_unknown);
    for (size_t l = 0; l < h.levels.size(); ++l) {
      INFO("level " << l);
      const CmgLevel& level = h.levels[l];
      // The numbering (and so the clusters) is the Jacobi hierarchy's.
      CHECK(level.A.col == jacobi.levels[l].A.col);
      CHECK(level.cluster_ptr == jacobi.levels[l].cluster_ptr);
      CHECK(jacobi.levels[l].color_ptr.empty());
      if (l + 1 == h.levels.size()) {
        CHECK(level.color_ptr.empty());
        continue;
      }
      const int32_t n = level.A.rows;
      REQUIRE(level.color_ptr.size() >= 3);  // a graph with edges needs two colours at least
      REQUIRE(level.color_ptr.front() == 0);
      REQUIRE(level.color_ptr.back() == n);
      REQUIRE(level.color_rows.size() == size_t(n));
      std::vector<int32_t> color(size_t(n), -1);
      int bad_order = 0, repeated = 0, empty = 0, conflicts = 0;
      for (size_t c = 0; c + 1 < level.color_ptr.size(); ++c) {
        if (level.color_ptr[c] >= level.color_ptr[c + 1]) ++empty;
        for (int32_t k = level.color_ptr[c]; k < level.color_ptr[c + 1]; ++k) {
          const int32_t i = level.color_rows[k];
          if (k > level.color_ptr[c] && level.color_rows[k - 1] >= i) ++bad_order;
          if (color[i] >= 0) ++repeated;
          color[i] = int32_t(c);
        }
      }
      for (int32_t i = 0; i < n; ++i)
        for (int32_t k = level.A.ptr[i]; k < level.A.ptr[i + 1]; ++k)
          if (level.A.col[k] != i && color[level.A.col[k]] == color[i]) ++conflicts;
      CHECK(bad_order == 0);
      CHECK(repeated == 0);
      CHECK(empty == 0);
      CHECK(std::count(color.begin(), color.end(), -1) == 0);
      CHECK(conflicts == 0);
    }
  }
}

TEST_CASE("the CMG cycle with sgs is symmetric and positive definite", "[cmg][sgs][ibmpg1]") {
  struct Case {
    const char* name;
    CsrMatrix G;
    CmgOptions options;
  };
  // v_cycle_rows 0: repeats of 2 and more on every level (f C b f C b ...); 1 << 30: a V-cycle.
  const Case cases[] = {{"grid, W-cycle", grid_matrix(60, 1), sgs_options(100, 0)},
                        {"grid with wire chains, V-cycle", grid_matrix(60, 2), sgs_options(100, 1 << 30)},
                        {"ibmpg1, default cycle", ibmpg1(), sgs_options(CmgOptions{}.coarse_rows, CmgOptions{}.v_cycle_rows)},
                        {"ibmpg1, W-cycle", ibmpg1(), sgs_options(100, 0)}};
  for (const Case& c : cases) {
    INFO(c.name);
    const CmgPreconditioner M(c.G, c.options);
    REQUIRE(M.levels().size() >= 3);
    test::check_fixed_spd(M, static_cast<size_t>(c.G.rows));
  }
}

TEST_CASE("CMG-SGS PCG on a 100k-unknown grid matches the direct solve in fewer iterations than Jacobi",
          "[cmg][sgs]") {
  test::GridShape shape;
  shape.nx = shape.ny = 224;
  shape.via_stride = 2;
  const test::GridSystem sys = test::make_grid_system(shape);
  REQUIRE(sys.G.rows >= 100000);
  std::vector<double> reference;
  solve_direct(sys.G, sys.b, reference);
  SolveControl control;
  control.tolerance = 1e-10;
  int iterations[2] = {0, 0};
  for (CmgSmoother smoother : {CmgSmoother::jacobi, CmgSmoother::sgs}) {
    CmgOptions options;
    options.smoother = smoother;
    const CmgPreconditioner M(sys.G, options);
    std::vector<double> x(sys.b.size(), 0.0);
    const SolveResult r = pcg_cpu(sys.G, sys.b, x, M, control);
    INFO(cmg_smoother_name(smoother) << ": " << r.iterations << " iterations");
    CHECK(r.converged);
    CHECK(r.relative_residual <= 1e-10);
    CHECK(test::max_abs_difference(x, reference) <= 1e-8);
    iterations[smoother == CmgSmoother::sgs] = r.iterations;
  }
  WARN("100k grid: CMG-Jacobi " << iterations[0] << " iterations, CMG-SGS " << iterations[1]);
  CHECK(iterations[1] <= iterations[0]);
}

TEST_CASE("ibmpg1: CMG-SGS PCG within 1e-6 V of the reference, in fewer iterations than Jacobi",
          "[cmg][sgs][ibmpg1]") {
  int iterations[2] = {0, 0};
  for (const char* smoother : {"jacobi", "sgs"}) {
    Options opt;
    opt.netlist = test::shared_data("ibmpg1.spice");
    opt.compare = test::shared_data("ibmpg1.solution");
    opt.backend = "cpu";
    opt.smoother = smoother;
    opt.quiet = true;
    const RunReport rep = run(opt);
    INFO(smoother << ": " << rep.result.iterations << " iterations");
    CHECK(rep.precond == "cmg");
    CHECK(rep.smoother == smoother);
    CHECK(rep.result.converged);
    CHECK(rep.result.relative_residual <= 1e-10);
    REQUIRE(rep.comparison);
    CHECK(rep.comparison->matched == 30635);
    CHECK(rep.comparison->max_abs_error <= 1e-6);
    iterations[std::string(smoother) == "sgs"] = rep.result.iterations;
  }
  WARN("ibmpg1: CMG-Jacobi " << iterations[0] << " iterations, CMG-SGS " << iterations[1]);
  CHECK(iterations[1] <= iterations[0]);
}

TEST_CASE("an unknown smoother name is refused", "[cmg][sgs]") {
  CHECK(parse_cmg_smoother("jacobi") == CmgSmoother::jacobi);
  CHECK(parse_cmg_smoother("sgs") == CmgSmoother::sgs);
  CHECK_THROWS_AS(parse_cmg_smoother("gs"), std::invalid_argument);
  CHECK(cmg_smoother_names().front() == "jacobi");
}
