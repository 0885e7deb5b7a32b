// Every GPU triangular-solve method against the CPU substitution, to 1e-12 relative, on random
// triangles of several shapes and on IC(0) factors; and the IC(0) device preconditioner.
#include <cuda_runtime.h>  // the typed cudaMalloc overload DeviceBuffer uses

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "app/compare.hpp"
#include "app/voltage_file.hpp"
#include "cmg/galerkin.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/gpu_solver.hpp"
#include "gpu/ic0_preconditioner.hpp"
#include "gpu/sptrsv.hpp"
#include "gpu_test_util.hpp"
#include "pcg/ic0.hpp"
#include "triangles.hpp"

using namespace pgsim;
using gpu::DeviceBuffer;
using gpu::TrsvMethod;
using test::Shape;

namespace {

const TrsvMethod kMethods[] = {TrsvMethod::syncfree, TrsvMethod::thread,   TrsvMethod::colored,
                               TrsvMethod::levelset, TrsvMethod::cusparse, TrsvMethod::automatic};

class Stream {
 public:
  Stream() { PGSIM_CUDA(cudaStreamCreate(&s_)); }
  ~Stream() { cudaStreamDestroy(s_); }
  operator cudaStream_t() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

// Solves T x = b with every method, three times with different right-hand sides (every solve
// must start from its own pending marks, not the last solve's values), against the CPU.
void check_all_methods(const CsrMatrix& T, Triangle tri) {
  Stream stream;
  DeviceBuffer<double> b(static_cast<size_t>(T.rows)), x(static_cast<size_t>(T.rows));
  for (TrsvMethod method : kMethods) {
    gpu::SpTrsv solver(T, tri, method);
    for (uint32_t round = 0; round < 3; ++round) {
      INFO(gpu::to_string(method) << " (" << gpu::to_string(solver.method()) << "), "
                                  << (tri == Triangle::lower ? "lower" : "upper") << ", solve " << round);
      const std::vector<double> rhs = test::random_vector(static_cast<size_t>(T.rows), 100 + round);
      std::vector<double> expected(rhs.size());
      solve_triangular(T, tri, rhs.data(), expected.data());
      b.upload(rhs);
      solver.solve(b.data(), x.data(), stream);
      PGSIM_CUDA(cudaStreamSynchronize(stream));
      CHECK(test::max_relative_error(x.download(), expected) <= 1e-12);
    }
  }
}

}  // namespace

TEST_CASE("GPU SpTRSV: every method matches the CPU on random triangles", "[gpu][trsv]") {
  test::skip_without_gpu();
  for (Shape shape : {Shape::chain, Shape::wide, Shape::dense, Shape::empty_runs}) {
    INFO(test::shape_name(shape));
    const CsrMatrix L = test::random_lower(shape, 21);
    check_all_methods(L, Triangle::lower);
    check_all_methods(transpose(L), Triangle::upper);
  }
}

TEST_CASE("GPU SpTRSV: every method matches the CPU on IC(0) factors", "[gpu][trsv][ibmpg1]") {
  test::skip_without_gpu();
  const CsrMatrix grid = grid_matrix(120, 80, 7), ibmpg1 = test::ibmpg1_matrix();
  for (const CsrMatrix* G : {&grid, &ibmpg1}) {
    INFO(G->rows << " rows");
    const Ic0Factor natural = ic0_factor(*G);
    check_all_methods(natural.L, Triangle::lower);
    check_all_methods(natural.Lt, Triangle::upper);
    const std::vector<int32_t> order = color_order(greedy_coloring(*G));
    const Ic0Factor colored = ic0_factor(permute_symmetric(*G, inverse_permutation(order)));
    check_all_methods(colored.L, Triangle::lower);
    check_all_methods(colored.Lt, Triangle::upper);
  }
}

TEST_CASE("GPU SpTRSV: a sync-free solve captured in a CUDA graph replays correctly", "[gpu][trsv]") {
  test::skip_without_gpu();
  const CsrMatrix L = test::random_lower(Shape::wide, 5);
  Stream stream;
  DeviceBuffer<double> b(static_cast<size_t>(L.rows)), x(static_cast<size_t>(L.rows));
  for (TrsvMethod method : {TrsvMethod::syncfree, TrsvMethod::thread}) {
    gpu::SpTrsv solver(L, Triangle::lower, method);
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    PGSIM_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    solver.solve(b.data(), x.data(), stream);
    PGSIM_CUDA(cudaStreamEndCapture(stream, &graph));
    PGSIM_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    for (uint32_t round = 0; round < 3; ++round) {
      INFO(gpu::to_string(method) << " replay " << round);
      const std::vector<double> rhs = test::random_vector(static_cast<size_t>(L.rows), 200 + round);
      std::vector<double> expected(rhs.size());
      solve_triangular(L, Triangle::lower, rhs.data(), expected.data());
      b.upload(rhs);
      PGSIM_CUDA(cudaGraphLaunch(exec, stream));
      PGSIM_CUDA(cudaStreamSynchronize(stream));
      CHECK(test::max_relative_error(x.download(), expected) <= 1e-12);
    }
    PGSIM_CUDA(cudaGraphExecDestroy(exec));
    PGSIM_CUDA(cudaGraphDestroy(graph));
  }
}

TEST_CASE("GPU SpTRSV: a right-hand side of NaNs with every bit set does not hang the sync-free solves",
          "[gpu][trsv]") {
  // The sync-free kernels mark unsolved entries with that bit pattern; a row whose result has it
  // must still be published (as another NaN), or every later row would wait for ever.
  test::skip_without_gpu();
  const CsrMatrix L = test::random_lower(Shape::chain, 9);
  std::vector<double> rhs = test::random_vector(static_cast<size_t>(L.rows), 300);
  const size_t poisoned = rhs.size() / 2;
  const uint64_t all_ones = ~uint64_t{0};
  std::memcpy(&rhs[poisoned], &all_ones, sizeof(double));
  Stream stream;
  DeviceBuffer<double> b(rhs), x(rhs.size());
  for (TrsvMethod method : {TrsvMethod::syncfree, TrsvMethod::thread}) {
    INFO(gpu::to_string(method));
    gpu::SpTrsv solver(L, Triangle::lower, method);
    solver.solve(b.data(), x.data(), stream);
    PGSIM_CUDA(cudaStreamSynchronize(stream));
    const std::vector<double> got = x.download();
    CHECK(std::isnan(got[poisoned]));
    CHECK(std::isfinite(got[0]));
  }
}

TEST_CASE("GPU IC(0) preconditioner equals the CPU one", "[gpu][ic0][ibmpg1]") {
  test::skip_without_gpu();
  const CsrMatrix G = test::ibmpg1_matrix();
  const std::vector<double> r = test::random_vector(static_cast<size_t>(G.rows), 9);
  Stream stream;
  DeviceBuffer<double> r_dev(r), z_dev(r.size());
  for (TrsvMethod method : kMethods) {
    INFO(gpu::to_string(method));
    gpu::Ic0DevicePreconditioner M(G, method);
    M.apply(r_dev.data(), z_dev.data(), stream);
    PGSIM_CUDA(cudaStreamSynchronize(stream));
    // The colored method factors the colour-ordered system: the same operator on the CPU is
    // P^T (Lc Lc^T)^{-1} P with the colour order P.
    std::vector<double> expected(r.size());
    if (method == TrsvMethod::colored) {
      CHECK(M.colors() > 1);
      const std::vector<int32_t> order = color_order(greedy_coloring(G));
      const Ic0Preconditioner cpu(permute_symmetric(G, inverse_permutation(order)));
      std::vector<double> rp(r.size()), zp(r.size());
      for (size_t i = 0; i < r.size(); ++i) rp[i] = r[order[i]];
      cpu.apply(rp.data(), zp.data());
      for (size_t i = 0; i < r.size(); ++i) expected[order[i]] = zp[i];
    } else {
      Ic0Preconditioner(G).apply(r.data(), expected.data());
    }
    CHECK(test::max_relative_error(z_dev.download(), expected) <= 1e-12);
  }
}

TEST_CASE("GPU IC(0)-PCG solves ibmpg1 to 1e-10 within 1e-6 V of the reference", "[gpu][ic0][ibmpg1]") {
  test::skip_without_gpu();
  const Netlist nl = parse_netlist(test::shared_data("ibmpg1.spice"));
  const ReducedSystem sys = reduce(nl);
  const MatchedReference reference = match_reference(nl, read_voltages(test::shared_data("ibmpg1.solution")));
  SolveControl control;
  control.tolerance = 1e-10;
  for (const char* trsv : {"colored", "thread", "syncfree", "auto"}) {
    INFO(trsv);
    gpu::GpuSolveSettings s;
    s.precond = "ic0";
    s.trsv = trsv;
    std::vector<double> x(sys.b.size(), 0.0);
    const gpu::GpuSolveReport rep = gpu::solve_on_gpu(sys.G, sys.b, x, nullptr, control, s);
    WARN("GPU IC(0)-PCG on ibmpg1, --trsv " << trsv << ": " << rep.result.iterations << " iterations, "
                                            << rep.solve_seconds * 1e3 << " ms");
    REQUIRE(rep.result.converged);
    CHECK(rep.result.relative_residual <= 1e-10);
    CHECK(compare_voltages(nl, node_voltages(sys, x), reference).max_abs_error <= 1e-6);
  }
}
