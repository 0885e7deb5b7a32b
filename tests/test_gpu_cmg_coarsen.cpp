// CMG level 0 coarsened on the device (gpu/cmg_coarsen.hpp) against the host's clustering and
// Galerkin product, bit for bit, and the GPU solve that builds its hierarchy that way.
#include <catch2/catch.hpp>

#include <cmath>

#include "cmg/builder.hpp"
#include "cmg/clustering.hpp"
#include "cmg/galerkin.hpp"
#include "cmg/laplacian.hpp"
#include "gpu/cmg_coarsen.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/gpu_solver.hpp"
#include "coarsening_matrices.hpp"
#include "gpu_test_util.hpp"
#include "hierarchy_checks.hpp"

using namespace pgsim;

namespace {

LevelCoarsening on_device(const CsrMatrix& G) {
  const gpu::DeviceCsr d(G);
  return gpu::coarsen_level0_on_device(d.view());
}

// The device's level 0 coarsening of G is the host's, every bit.
void check_level0(const CsrMatrix& G) {
  const GroundedSdd level0 = grounded_sdd(G);
  const Clustering want = cluster_vertices(level0);
  const CsrMatrix want_coarse = galerkin_coarse(level0, want.cluster_of, want.count);
  REQUIRE(want.count > 1);
  REQUIRE(want.count < level0.rows());
  const LevelCoarsening got = on_device(G);
  CHECK(got.clustering.count == want.count);
  CHECK(got.clustering.cluster_of == want.cluster_of);
  test::check_same_csr(got.coarse, want_coarse);
}

}  // namespace

TEST_CASE("level 0 coarsened on the device is the host's clustering and Galerkin product, bit for bit") {
  test::skip_without_gpu();
  for (const auto& [name, G] : test::coarsening_matrices()) {
    INFO(name);
    check_level0(G);
  }
}

TEST_CASE("a hierarchy built on the device's level 0 is the host's, and the GPU solve builds it so") {
  test::skip_without_gpu();
  const test::GridSystem sys = test::square_grid(317, 2);
  const CmgHierarchy want = build_cmg_hierarchy(sys.G);
  CmgOptions o;
  int calls = 0;
  o.coarsen_level0 = [&](const CsrMatrix& G) {
    ++calls;
    CHECK(&G == &sys.G);
    return on_device(G);
  };
  const CmgHierarchy got = build_cmg_hierarchy(sys.G, o);
  CHECK(calls == 1);
  REQUIRE(want.levels.size() >= 3);
  test::check_same_hierarchy(got, want);

  // The Gauss-Seidel solve that builds its hierarchy once G is on the device gives the same
  // iterates: the same bits of x and the same iteration count as the solve given the host's.
  SolveControl control;
  control.tolerance = 1e-10;
  gpu::GpuSolveSettings s;
  s.precond = "cmg";
  std::vector<double> x_given(sys.b.size(), 0.0), x_built(sys.b.size(), 0.0);
  // The Gauss-Seidel hierarchy is the host's, level 0 coarsened on the device (gpu/cmg_build.hpp
  // builds the Jacobi one; tests/test_gpu_cmg_build.cpp).
  CmgOptions sgs;
  sgs.smoother = CmgSmoother::sgs;
  const CmgHierarchy want_sgs = build_cmg_hierarchy(sys.G, sgs);
  const gpu::GpuSolveReport given = gpu::solve_on_gpu(sys.G, sys.b, x_given, &want_sgs, control, s);
  const gpu::GpuSolveReport built = gpu::solve_on_gpu(sys.G, sys.b, x_built, sgs, control, s);
  CHECK(built.setup_detail.rfind("level 0 coarsened on the device", 0) == 0);
  REQUIRE(given.result.converged);
  CHECK(built.result.converged);
  CHECK(built.result.iterations == given.result.iterations);
  CHECK(x_built == x_given);
  CHECK(built.setup_seconds > 0);
  CHECK(given.setup_seconds == 0);
  // And both are the solution: the residual of the whole system.
  std::vector<double> r(sys.b.size());
  sys.G.multiply(x_built.data(), r.data());
  double worst = 0, scale = 0;
  for (size_t i = 0; i < r.size(); ++i) {
    worst = std::max(worst, std::fabs(r[i] - sys.b[i]));
    scale = std::max(scale, std::fabs(sys.b[i]));
  }
  CHECK(worst <= 1e-8 * scale);
}
