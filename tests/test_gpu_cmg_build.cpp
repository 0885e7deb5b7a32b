// The CMG hierarchy built wholly on the device (gpu/cmg_build.hpp) against the host's
// build_cmg_hierarchy, bit for bit, and the GPU solve that builds it so.
#include <catch2/catch.hpp>

#include <cmath>
#include <optional>
#include <stdexcept>

#include "cmg/builder.hpp"
#include "gpu/cmg_build.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/device_hierarchy.hpp"
#include "gpu/gpu_solver.hpp"
#include "coarsening_matrices.hpp"
#include "gpu_test_util.hpp"
#include "hierarchy_checks.hpp"

using namespace pgsim;

namespace {

// The device's hierarchy of G is the host's, every array to the last bit.
void check_built(const CsrMatrix& G, const CmgOptions& o = {}) {
  const CmgHierarchy want = build_cmg_hierarchy(G, o);
  REQUIRE(gpu::builds_on_device(o, G.rows));
  const gpu::DeviceCsr d(G);
  gpu::DeviceBuildTimes t;
  const gpu::DeviceCmgHierarchy built = gpu::build_cmg_hierarchy_on_device(d.view(), o, &t);
  CHECK(built.levels.size() == want.levels.size());
  CHECK(t.total > 0);
  test::check_same_hierarchy(gpu::to_host(built), want);
}

// max |G x - b| / max |b|.
double relative_residual(const CsrMatrix& G, const std::vector<double>& b, const std::vector<double>& x) {
  std::vector<double> r(b.size());
  G.multiply(x.data(), r.data());
  double worst = 0, scale = 0;
  for (size_t i = 0; i < r.size(); ++i) {
    worst = std::max(worst, std::fabs(r[i] - b[i]));
    scale = std::max(scale, std::fabs(b[i]));
  }
  return worst / scale;
}

}  // namespace

TEST_CASE("which hierarchies the device builds") {
  CmgOptions o;
  CHECK(gpu::builds_on_device(o, 5000));
  CHECK_FALSE(gpu::builds_on_device(o, o.coarse_rows - 1));  // level 0 (with the ground) is the coarsest
  o.smoother = CmgSmoother::sgs;
  CHECK_FALSE(gpu::builds_on_device(o, 5000));
}

TEST_CASE("a hierarchy built on the device is the host's, bit for bit") {
  test::skip_without_gpu();
  SECTION("the coarsening's matrices") {
    for (const auto& [name, G] : test::coarsening_matrices()) {
      INFO(name);
      check_built(G);
    }
  }
  SECTION("other options: the coarsest size, the level cap, the cycle's shape") {
    const test::GridSystem sys = test::square_grid(200, 2);
    CmgOptions small;
    small.coarse_rows = 50;
    check_built(sys.G, small);
    CmgOptions capped;
    capped.max_levels = 2;  // level 1 the coarsest, however large
    check_built(sys.G, capped);
    CmgOptions plain;
    plain.chebyshev_rho = 0;
    plain.max_repeats = 0;
    plain.v_cycle_rows = 0;
    plain.v_cycle_ratio = 0;
    check_built(sys.G, plain);
  }
  SECTION("coarsening that stalls: level 0 the coarsest, stored in its own numbering") {
    CmgOptions stalls;
    stalls.stall_ratio = 0.01;
    check_built(test::square_grid(60, 2).G, stalls);
  }
}

TEST_CASE("the GPU solve builds the Jacobi hierarchy on the device: the host's iterates") {
  test::skip_without_gpu();
  const test::GridSystem sys = test::square_grid(317, 2);
  const CmgHierarchy want = build_cmg_hierarchy(sys.G);
  SolveControl control;
  control.tolerance = 1e-10;
  gpu::GpuSolveSettings s;
  s.precond = "cmg";
  std::vector<double> x_given(sys.b.size(), 0.0), x_built(sys.b.size(), 0.0);
  const gpu::GpuSolveReport given = gpu::solve_on_gpu(sys.G, sys.b, x_given, &want, control, s);
  const gpu::GpuSolveReport built = gpu::solve_on_gpu(sys.G, sys.b, x_built, CmgOptions{}, control, s);
  CHECK(built.setup_detail.rfind("CMG hierarchy built on the device", 0) == 0);
  REQUIRE(given.result.converged);
  CHECK(built.result.converged);
  CHECK(built.result.iterations == given.result.iterations);
  CHECK(x_built == x_given);
  CHECK(built.levels.size() == want.levels.size());
  CHECK(relative_residual(sys.G, sys.b, x_built) <= 1e-8);

  SECTION("float values and the seg layout: built on the host, level 0 on the device") {
    for (const bool float_values : {true, false}) {
      gpu::GpuSolveSettings other = s;
      other.float_hierarchy = float_values;
      if (!float_values) other.spmv = "seg";
      INFO("float values " << float_values);
      std::vector<double> x_host(sys.b.size(), 0.0), x_device(sys.b.size(), 0.0);
      const gpu::GpuSolveReport host = gpu::solve_on_gpu(sys.G, sys.b, x_host, &want, control, other);
      const gpu::GpuSolveReport device = gpu::solve_on_gpu(sys.G, sys.b, x_device, CmgOptions{}, control, other);
      CHECK(device.setup_detail.rfind("level 0 coarsened on the device", 0) == 0);
      REQUIRE(host.result.converged);
      CHECK(device.result.iterations == host.result.iterations);
      CHECK(x_device == x_host);
    }
  }
}

TEST_CASE("DeviceHierarchy: a hierarchy held on the device, its shape on the host") {
  const test::GridSystem sys = test::square_grid(200, 2);
  CmgOptions sgs;
  sgs.smoother = CmgSmoother::sgs;
  CHECK_FALSE(gpu::DeviceHierarchy::build(sys.G, sgs, 0));  // the host builds that one (nothing on the device)
  test::skip_without_gpu();
  const CmgHierarchy want = build_cmg_hierarchy(sys.G);
  std::optional<gpu::DeviceHierarchy> held = gpu::DeviceHierarchy::build(sys.G, CmgOptions{}, 0);
  REQUIRE(held);
  const CmgHierarchy& shape = held->shape();
  CHECK(shape.n == want.n);
  CHECK(shape.level0_of_unknown == want.level0_of_unknown);
  CHECK(shape.level0_ground == want.level0_ground);
  REQUIRE(shape.levels.size() == want.levels.size());
  for (size_t l = 0; l < want.levels.size(); ++l) {
    INFO("level " << l);
    CHECK(shape.levels[l].A.rows == want.levels[l].A.rows);
    CHECK(shape.levels[l].A.nnz() == 0);  // no matrix on the host
    CHECK(shape.levels[l].cluster_ptr == want.levels[l].cluster_ptr);
    CHECK(shape.levels[l].repeats == want.levels[l].repeats);
  }
  test::check_same_hierarchy(gpu::to_host(held->take()), want);
  CHECK_THROWS_AS(held->take(), std::logic_error);
}
