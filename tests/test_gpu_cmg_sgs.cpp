// The device CMG cycle with the Gauss-Seidel smoother against the CPU one, and GPU PCG with it.
#include <catch2/catch.hpp>

#include <cmath>

#include "cmg/builder.hpp"
#include "cmg/cmg_preconditioner.hpp"
#include "gpu/cmg_device.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu_test_util.hpp"
#include "mna/reduce.hpp"
#include "parser/netlist.hpp"
#include "pcg/pcg_cpu.hpp"
#include "test_util.hpp"

using namespace pgsim;

namespace {

std::vector<double> cpu_apply(const CmgHierarchy& h, const std::vector<double>& r) {
  const CmgPreconditioner M(h);
  std::vector<double> z(r.size());
  M.apply(r.data(), z.data());
  return z;
}

}  // namespace

TEST_CASE("device CMG cycle with sgs equals the CPU one", "[gpu][sgs]") {
  test::skip_without_gpu();
  std::mt19937 rng(21);
  // Pad every 37th node: short rows only; every 2nd: the ground vertex has ~1350 nonzeros, a long
  // row (a block) at level 0 and long rows further down.
  for (auto [pad, repeats] : {std::pair{37, 1}, std::pair{37, 2}, std::pair{2, 1}, std::pair{2, 3}}) {
    const CsrMatrix G = test::grid_sdd(60, 45, pad, rng);
    CmgHierarchy h = test::naive_hierarchy(G, 40, repeats, rng);
    use_gauss_seidel(h);
    REQUIRE(h.levels.size() >= 4);
    INFO("pad " << pad << ", repeats " << repeats);
    for (int k = 0; k < 3; ++k) {
      const std::vector<double> r = test::random_vector(size_t(G.rows), rng);
      const std::vector<double> want = cpu_apply(h, r);
      gpu::CmgDeviceOptions opt;
      CHECK(test::relative_difference(test::device_apply(h, opt, r), want) < 1e-12);
      opt.float_values = true;
      CHECK(test::relative_difference(test::device_apply(h, opt, r), want) < 1e-5);
      opt.float_values = false;
      opt.profile = true;
      CHECK(test::relative_difference(test::device_apply(h, opt, r), want) < 1e-12);
    }
  }
}

TEST_CASE("device CMG with sgs refuses a hierarchy without a colouring", "[gpu][sgs]") {
  test::skip_without_gpu();
  std::mt19937 rng(22);
  CmgHierarchy h = test::naive_hierarchy(test::grid_sdd(20, 20, 7, rng), 40, 1, rng);
  h.smoother = CmgSmoother::sgs;  // no use_gauss_seidel: no colouring
  CHECK_THROWS_AS(gpu::make_device_cmg(h, {}), std::invalid_argument);
}

TEST_CASE("ibmpg1: GPU PCG with CMG-SGS matches the CPU", "[gpu][sgs][ibmpg1]") {
  test::skip_without_gpu();
  const ReducedSystem sys = reduce(parse_netlist(test::shared_data("ibmpg1.spice")));
  CmgOptions options;
  options.smoother = CmgSmoother::sgs;
  const CmgHierarchy h = build_cmg_hierarchy(sys.G, options);
  SolveControl control;
  control.tolerance = 1e-10;
  std::vector<double> x_cpu(sys.b.size(), 0.0), x_gpu(sys.b.size(), 0.0);
  const SolveResult cpu = pcg_cpu(sys.G, sys.b, x_cpu, CmgPreconditioner(h), control);
  gpu::GpuSolveSettings s;
  s.precond = "cmg";
  const gpu::GpuSolveReport gpu = gpu::solve_on_gpu(sys.G, sys.b, x_gpu, &h, control, s);
  WARN("ibmpg1 CMG-SGS: CPU " << cpu.iterations << " iterations, GPU " << gpu.result.iterations << " iterations in "
                              << gpu.solve_seconds * 1e3 << " ms");
  REQUIRE(cpu.converged);
  REQUIRE(gpu.result.converged);
  CHECK(gpu.result.relative_residual <= 1e-10);
  CHECK(std::abs(gpu.result.iterations - cpu.iterations) <= 2);
  CHECK(test::max_abs_difference(x_cpu, x_gpu) <= 1e-9);
}
