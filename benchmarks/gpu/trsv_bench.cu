// Sparse triangular solves on the GPU: every method on the IC(0) factors of ibmpg1 and of
// generated grids, in natural and in colour order. Per method: time per solve (CUDA events, warm,
// median), GFLOP/s, preprocessing time, launches per solve, and ratios against cuSPARSE SpSV.
//
//   trsv_bench [--netlist ibmpg1.spice] [--grid 1000] [--grid 2237] [--repeats 10]
//
// Without --grid it runs 1000x1000 (1M unknowns) and 2237x2237 (5M unknowns) grids. Last, the
// coarsest level of each system's CMG hierarchy: its Cholesky factor solved by every method
// against the dense inverse that the GPU CMG cycle applies (one grid launch, or one block as in
// the cycle's tail kernel).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "cmg/builder.hpp"
#include "cmg/galerkin.hpp"
#include "gpu/coarse_inverse.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/device_info.hpp"
#include "gpu/sptrsv.hpp"
#include "mna/grid_matrix.hpp"
#include "mna/reduce.hpp"
#include "parser/netlist.hpp"
#include "pcg/ic0.hpp"
#include "pcg/pcg_cpu.hpp"
#include "pcg/triangular.hpp"

using namespace pgsim;
using gpu::TrsvMethod;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Median time in microseconds of `repeats` calls of `launch`, after one untimed warm-up call.
template <class F>
double median_us(F launch, int repeats) {
  cudaEvent_t start, stop;
  PGSIM_CUDA(cudaEventCreate(&start));
  PGSIM_CUDA(cudaEventCreate(&stop));
  launch();
  std::vector<float> ms;
  for (int r = 0; r < repeats; ++r) {
    PGSIM_CUDA(cudaEventRecord(start));
    launch();
    PGSIM_CUDA(cudaEventRecord(stop));
    PGSIM_CUDA(cudaEventSynchronize(stop));
    float t = 0;
    PGSIM_CUDA(cudaEventElapsedTime(&t, start, stop));
    ms.push_back(t);
  }
  PGSIM_CUDA(cudaEventDestroy(start));
  PGSIM_CUDA(cudaEventDestroy(stop));
  std::sort(ms.begin(), ms.end());
  return 1e3 * ms[ms.size() / 2];
}

struct Timed {
  double median_ms = 0;
  double rel_error = 0;
};

// Median over `repeats` warm solves, each timed with CUDA events, and the error against the CPU.
Timed time_solve(gpu::SpTrsv& solver, const CsrMatrix& T, Triangle tri, int repeats) {
  std::vector<double> rhs(static_cast<size_t>(T.rows));
  std::mt19937 rng(1);
  std::uniform_real_distribution<double> u(-1, 1);
  for (double& v : rhs) v = u(rng);
  gpu::DeviceBuffer<double> b(rhs), x(rhs.size());
  auto solve = [&] { solver.solve(b.data(), x.data(), nullptr); };
  // One timed solve first: methods that take seconds per solve get 3 repeats, not `repeats`.
  const double first_us = median_us(solve, 1);
  const double median_ms = median_us(solve, first_us > 1e5 ? 3 : repeats) * 1e-3;
  std::vector<double> expected(rhs.size());
  solve_triangular(T, tri, rhs.data(), expected.data());
  const std::vector<double> got = x.download();
  double diff = 0, ref = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    diff = std::max(diff, std::abs(got[i] - expected[i]));
    ref = std::max(ref, std::abs(expected[i]));
  }
  return {median_ms, diff / ref};
}

struct Row {
  std::string matrix, order, method;
  int32_t launches = 0;
  double solve_ms = 0;  // lower + upper, one IC(0) application
  double gflops = 0;
  double prep_ms = 0;   // lower + upper
  double error = 0;
};

void bench_factor(const std::string& name, const std::string& order, const Ic0Factor& f, int repeats,
                  std::vector<Row>& rows) {
  const LevelSets levels = level_sets(f.L, Triangle::lower);
  const RowBlocks blocks = independent_blocks(f.L, Triangle::lower);
  const int64_t n = f.L.rows, nnz = f.L.nnz();
  std::printf("# %s, %s order: n %lld, nnz(L) %lld, levels %d, independent blocks %d, parallel granularity %.2f\n",
              name.c_str(), order.c_str(), (long long)n, (long long)nnz, levels.count(), blocks.count(),
              parallel_granularity(f.L.rows, levels.count(), nnz));
  std::fflush(stdout);
  // Per triangle: nnz - n multiply-adds and n divisions.
  const double flops = 2.0 * (2.0 * double(nnz - n) + double(n));
  for (TrsvMethod method : {TrsvMethod::cusparse, TrsvMethod::syncfree, TrsvMethod::thread, TrsvMethod::levelset,
                            TrsvMethod::colored, TrsvMethod::automatic}) {
    if (method == TrsvMethod::colored && blocks.count() > 20000) {
      std::printf("# colored skipped: %d launches per solve\n", blocks.count());
      continue;
    }
    Row row{name, order, gpu::to_string(method)};
    for (Triangle tri : {Triangle::lower, Triangle::upper}) {
      const CsrMatrix& T = tri == Triangle::lower ? f.L : f.Lt;
      gpu::SpTrsv solver(T, tri, method);
      if (method == TrsvMethod::automatic) row.method = "auto=" + gpu::to_string(solver.method());
      const Timed t = time_solve(solver, T, tri, repeats);
      row.launches = solver.method() == TrsvMethod::cusparse ? 0 : solver.launches();
      row.solve_ms += t.median_ms;
      row.prep_ms += solver.analysis_seconds() * 1e3;
      row.error = std::max(row.error, t.rel_error);
    }
    row.gflops = flops / (row.solve_ms * 1e-3) / 1e9;
    rows.push_back(row);
  }
}

// IC(0)-PCG iterations to 1e-10 on the CPU with G in natural and in colour order: the price in
// convergence of the colour order that makes the triangular solves parallel.
void pcg_iterations(const std::string& name, const ReducedSystem& sys) {
  SolveControl control;
  control.tolerance = 1e-10;
  std::vector<double> x(sys.b.size(), 0.0);
  const SolveResult natural = pcg_cpu(sys.G, sys.b, x, Ic0Preconditioner(sys.G), control);
  const std::vector<int32_t> order = color_order(greedy_coloring(sys.G));
  const CsrMatrix P = permute_symmetric(sys.G, inverse_permutation(order));
  std::vector<double> bp(sys.b.size()), xp(sys.b.size(), 0.0);
  for (size_t i = 0; i < bp.size(); ++i) bp[i] = sys.b[order[i]];
  const SolveResult colour = pcg_cpu(P, bp, xp, Ic0Preconditioner(P), control);
  std::printf("# %s IC(0)-PCG on the CPU to 1e-10: natural order %d iterations, colour order %d iterations\n",
              name.c_str(), natural.iterations, colour.iterations);
}

// x = inv b, inv dense n x n row-major, a warp per row; rows strided over the grid's warps (one
// block: the way the CMG tail kernel runs the coarsest level).
__global__ void dense_matvec_kernel(int32_t n, const double* __restrict__ inv, const double* __restrict__ b,
                                    double* __restrict__ x) {
  const int lane = threadIdx.x & 31;
  const int32_t warps = int32_t(gridDim.x * blockDim.x / 32);
  for (int32_t i = int32_t((blockIdx.x * blockDim.x + threadIdx.x) / 32); i < n; i += warps) {
    double s = 0;
    for (int32_t j = lane; j < n; j += 32) s += inv[size_t(i) * size_t(n) + size_t(j)] * b[j];
    for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
    if (lane == 0) x[i] = s;
  }
}

void bench_coarsest(const std::string& name, const CsrMatrix& G, int repeats) {
  const CmgHierarchy h = build_cmg_hierarchy(G);
  const CoarseFactor& f = h.coarse;
  const int32_t n = h.levels.back().A.rows;
  std::printf("| %s | %d | %d | %lld | %d |", name.c_str(), int(h.levels.size()), n, (long long)f.L.nnz(),
              level_sets(f.L, Triangle::lower).count());
  gpu::DeviceBuffer<double> b{std::vector<double>(size_t(n), 1.0)}, y{size_t(n)}, x{size_t(n)};
  for (TrsvMethod method : {TrsvMethod::cusparse, TrsvMethod::syncfree, TrsvMethod::thread, TrsvMethod::levelset,
                            TrsvMethod::colored}) {
    gpu::SpTrsv lower(f.L, Triangle::lower, method), upper(f.Lt, Triangle::upper, method);
    std::printf(" %.1f |", median_us([&] {
                  lower.solve(b.data(), y.data(), nullptr);
                  upper.solve(y.data(), x.data(), nullptr);
                }, repeats));
  }
  const gpu::DeviceBuffer<double> inv(gpu::dense_coarse_inverse(f, n));
  const double grid_us = median_us([&] {
    dense_matvec_kernel<<<unsigned((int64_t(n) * 32 + 255) / 256), 256>>>(n, inv.data(), b.data(), x.data());
  }, repeats);
  const double block_us = median_us([&] { dense_matvec_kernel<<<1, 1024>>>(n, inv.data(), b.data(), x.data()); },
                                    repeats);
  std::printf(" %.1f | %.1f |\n", grid_us, block_us);
}

}  // namespace

int main(int argc, char** argv) {
  std::string netlist;
  std::vector<int> grids;
  int repeats = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string opt = argv[i];
    if (opt == "--netlist") netlist = argv[i + 1];
    else if (opt == "--grid") grids.push_back(std::atoi(argv[i + 1]));
    else if (opt == "--repeats") repeats = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: trsv_bench [--netlist FILE] [--grid N]... [--repeats R]\n");
      return 2;
    }
  }
  if (grids.empty()) grids = {1000, 2237};
  std::string why;
  if (!gpu::device_available(&why)) {
    std::fprintf(stderr, "trsv_bench: no GPU: %s\n", why.c_str());
    return 4;
  }
  std::printf("# %s\n", gpu::device_description().c_str());

  std::vector<std::pair<std::string, CsrMatrix>> systems;
  if (!netlist.empty()) {
    const ReducedSystem sys = reduce(parse_netlist(netlist));
    pcg_iterations("ibmpg1", sys);
    systems.emplace_back("ibmpg1", sys.G);
  }
  for (int g : grids) systems.emplace_back("grid" + std::to_string(g) + "^2", grid_matrix(g, g, 1));

  std::vector<Row> rows;
  for (const auto& [name, G] : systems) {
    auto t0 = std::chrono::steady_clock::now();
    const Ic0Factor natural = ic0_factor(G);
    const double t_ic0 = seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    const std::vector<int32_t> color = greedy_coloring(G);
    const CsrMatrix P = permute_symmetric(G, inverse_permutation(color_order(color)));
    const double t_color = seconds_since(t0);
    const Ic0Factor colored = ic0_factor(P);
    std::printf("# %s: %d unknowns, IC(0) on the CPU %.3f s; colouring + reorder %.3f s, %d colours\n", name.c_str(),
                G.rows, t_ic0, t_color, *std::max_element(color.begin(), color.end()) + 1);
    bench_factor(name, "natural", natural, repeats, rows);
    bench_factor(name, "colour", colored, repeats, rows);
  }

  std::printf("\nOne IC(0) application = lower + upper solve. prep = the method's analysis for both triangles\n"
              "(upload excluded). x cuSPARSE: cuSPARSE time / this time (same matrix and order).\n\n");
  std::printf("| matrix | order | method | launches | solve ms | GFLOP/s | prep ms | speed x cuSPARSE | prep x cuSPARSE | rel. error |\n");
  std::printf("|---|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Row& r : rows) {
    const Row* base = nullptr;
    for (const Row& c : rows)
      if (c.matrix == r.matrix && c.order == r.order && c.method == "cusparse") base = &c;
    std::printf("| %s | %s | %s | %d | %.3f | %.2f | %.3f | %.2f | %.1f | %.1e |\n", r.matrix.c_str(), r.order.c_str(),
                r.method.c_str(), r.launches, r.solve_ms, r.gflops, r.prep_ms, base->solve_ms / r.solve_ms,
                base->prep_ms / r.prep_ms, r.error);
  }

  std::printf("\nCMG coarsest level: its factor solved (L then L^T, us per solve) by each method, against the\n"
              "dense inverse applied by one grid launch or by one 1024-thread block (as in the CMG tail kernel).\n\n");
  std::printf("| system | levels | coarsest rows | nnz(L) | levels of L | cusparse | syncfree | thread | levelset | "
              "colored | dense, grid | dense, 1 block |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const auto& [name, G] : systems) bench_coarsest(name, G, 50);
  return 0;
}
