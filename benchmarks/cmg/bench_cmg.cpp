// CMG-PCG against Jacobi-PCG on the CPU, with and without chain elimination, in one run:
// hierarchy levels, operator complexity, setup and solve times (median of --repeat runs), iterations.
//   bench_cmg --netlist ../shared/data/ibmpg1.spice
//   bench_cmg --grid 317            # generated 2-layer grid, 2 * 317^2 = 200,978 unknowns
//   bench_cmg --netlist g5m.sp --phases   # setup only: chain elimination and each hierarchy
//                                         # build phase per level (median of --repeat builds)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include <omp.h>

#include "cmg/builder.hpp"
#include "cmg/cmg_preconditioner.hpp"
#include "grid_system.hpp"
#include "mna/chain_elimination.hpp"
#include "mna/reduce.hpp"
#include "parser/netlist.hpp"
#include "pcg/jacobi.hpp"
#include "pcg/pcg_cpu.hpp"

using namespace pgsim;
using Clock = std::chrono::steady_clock;

namespace {

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Row {
  std::string name;
  int32_t rows = 0;
  double setup = 0, solve = 0, residual = 0;
  int iterations = 0;
};

// Setup once (median of `repeat` builds), then `repeat` solves to `tolerance` (relative to the original
// system's right-hand side); the true residual of the original system.
Row measure(const std::string& name, const CsrMatrix& G0, const std::vector<double>& b0, bool eliminate,
            bool cmg, const CmgOptions& options, int repeat, bool print_levels, double tolerance) {
  Row row;
  row.name = name;
  std::vector<double> setups, solves;
  for (int r = 0; r < repeat; ++r) {
    auto t = Clock::now();
    EliminatedSystem chains;
    if (eliminate) chains = eliminate_chains(G0, b0);
    const CsrMatrix& G = eliminate ? chains.G : G0;
    const std::vector<double>& b = eliminate ? chains.b : b0;
    std::unique_ptr<Preconditioner> M;
    if (cmg)
      M = std::make_unique<CmgPreconditioner>(G, options);
    else
      M = std::make_unique<JacobiPreconditioner>(G);
    setups.push_back(since(t));
    row.rows = G.rows;
    const double bn = std::sqrt(std::inner_product(b0.begin(), b0.end(), b0.begin(), 0.0));
    const double kn = std::sqrt(std::inner_product(b.begin(), b.end(), b.begin(), 0.0));
    SolveControl control;
    control.tolerance = tolerance * bn / kn;
    control.max_iterations = 100000;
    t = Clock::now();
    std::vector<double> x(static_cast<size_t>(G.rows), 0.0);
    SolveResult res = pcg_cpu(G, b, x, *M, control);
    std::vector<double> full = eliminate ? chains.recover(x) : x;
    solves.push_back(since(t));
    row.iterations = res.iterations;
    row.residual = relative_residual(G0, b0, full);
    if (print_levels && r + 1 == repeat) {
      const auto levels = M->levels();
      double nnz0 = double(levels.front().nnz), total = 0;
      std::printf("  %s hierarchy:\n  %5s %10s %11s %7s %7s %8s %10s\n", name.c_str(), "level", "rows", "nnz",
                  "ratio", "repeats", "visits", "s (last)");
      for (size_t l = 0; l < levels.size(); ++l) {
        total += double(levels[l].nnz);
        const double ratio = l + 1 < levels.size() ? double(levels[l + 1].rows) / double(levels[l].rows) : 0.0;
        std::printf("  %5zu %10lld %11lld %7.3f %7d %8.0f %10.5f\n", l, (long long)levels[l].rows,
                    (long long)levels[l].nnz, ratio, levels[l].repeats, levels[l].visits,
                    levels[l].seconds);
      }
      // Work of one PCG iteration in level-0 SpMVs: PCG's own product, two passes over each
      // level per child cycle, two triangular solves per coarsest visit.
      const auto& cmg_m = static_cast<const CmgPreconditioner&>(*M);
      double work = nnz0;
      for (size_t l = 0; l + 1 < levels.size(); ++l) work += 2.0 * levels[l].visits * levels[l].repeats * double(levels[l].nnz);
      work += 2.0 * levels.back().visits * double(cmg_m.hierarchy().coarse.L.nnz());
      std::printf("  operator complexity (sum nnz / nnz level 0): %.3f, work per iteration: %.2f level-0 SpMVs\n",
                  total / nnz0, work / nnz0);
    }
  }
  row.setup = median(setups);
  row.solve = median(solves);
  return row;
}

// FNV-1a over every array of the hierarchy: equal hashes for equal hierarchies (e.g. built with
// different thread counts or by another commit).
uint64_t hierarchy_hash(const CmgHierarchy& h) {
  uint64_t x = 1469598103934665603ull;
  auto add = [&x](const auto& v) {
    const auto* p = reinterpret_cast<const unsigned char*>(v.data());
    for (size_t i = 0; i < v.size() * sizeof(v[0]); ++i) x = (x ^ p[i]) * 1099511628211ull;
  };
  auto add_csr = [&add](const CsrMatrix& A) {
    add(A.ptr);
    add(A.col);
    add(A.val);
  };
  add(h.level0_of_unknown);
  add(std::vector<int32_t>{h.n, h.level0_ground, h.coarse.grounded});
  for (const CmgLevel& l : h.levels) {
    add_csr(l.A);
    add(l.inv_diag);
    add(l.cluster_ptr);
    add(l.color_ptr);
    add(l.color_rows);
    add(std::vector<int32_t>{l.repeats});
    add(l.weights);
  }
  add(h.coarse.vertex);
  add_csr(h.coarse.L);
  add_csr(h.coarse.Lt);
  return x;
}

// Setup only: chain elimination, then `repeat` hierarchy builds with their phase times (median per phase).
void phases(const CsrMatrix& G0, const std::vector<double>& b0, const CmgOptions& options, int repeat) {
  auto t = Clock::now();
  const EliminatedSystem chains = eliminate_chains(G0, b0);
  const double t_elim = since(t);
  std::vector<CmgBuildTimes> runs;
  CmgHierarchy h;
  for (int r = 0; r < repeat; ++r) {
    runs.emplace_back();
    h = build_cmg_hierarchy(chains.G, options, &runs.back());
  }
  auto med = [&runs](auto field) {
    std::vector<double> v;
    for (const CmgBuildTimes& run : runs) v.push_back(field(run));
    return median(v);
  };
  std::printf("%d OpenMP threads; chain elimination %.3f s (%d -> %d unknowns); hierarchy build, median of %d:\n",
              omp_get_max_threads(), t_elim, G0.rows, chains.G.rows, repeat);
  std::printf("| level |     rows |      nnz | clustering | galerkin | renumber |  permute | inv_diag |\n");
  std::printf("|------:|---------:|---------:|-----------:|---------:|---------:|---------:|---------:|\n");
  double sum[5] = {0, 0, 0, 0, 0};
  for (size_t l = 0; l < h.levels.size(); ++l) {
    const double p[5] = {med([l](const CmgBuildTimes& x) { return x.levels[l].clustering; }),
                         med([l](const CmgBuildTimes& x) { return x.levels[l].galerkin; }),
                         med([l](const CmgBuildTimes& x) { return x.levels[l].renumber; }),
                         med([l](const CmgBuildTimes& x) { return x.levels[l].permute; }),
                         med([l](const CmgBuildTimes& x) { return x.levels[l].inv_diag; })};
    for (int i = 0; i < 5; ++i) sum[i] += p[i];
    std::printf("| %5zu | %8d | %8lld | %10.4f | %8.4f | %8.4f | %8.4f | %8.4f |\n", l, h.levels[l].A.rows,
                (long long)h.levels[l].A.nnz(), p[0], p[1], p[2], p[3], p[4]);
  }
  std::printf("|   all |          |          | %10.4f | %8.4f | %8.4f | %8.4f | %8.4f |\n", sum[0], sum[1], sum[2],
              sum[3], sum[4]);
  std::printf("laplacian %.4f s, coarse factor %.4f s (%d rows), total %.4f s; hierarchy hash %016llx\n",
              med([](const CmgBuildTimes& x) { return x.laplacian; }),
              med([](const CmgBuildTimes& x) { return x.coarse_factor; }), h.levels.back().A.rows,
              med([](const CmgBuildTimes& x) { return x.total; }), (unsigned long long)hierarchy_hash(h));
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::string netlist;
  CmgOptions options;
  test::GridShape shape;
  bool grid = false;
  int repeat = 3;
  double tolerance = 1e-10;
  bool jacobi = true, setup_only = false, plain = true;  // plain: also without chain elimination
  for (int i = 1; i < argc; i += 2) {
    if (!std::strcmp(argv[i], "--no-jacobi") || !std::strcmp(argv[i], "--phases") ||
        !std::strcmp(argv[i], "--eliminated-only")) {  // flags without a value
      if (argv[i][2] == 'n') jacobi = false;
      else if (argv[i][2] == 'e') plain = false;
      else setup_only = true;
      --i;
      continue;
    }
    if (i + 1 >= argc) break;
    if (!std::strcmp(argv[i], "--netlist")) netlist = argv[i + 1];
    else if (!std::strcmp(argv[i], "--grid")) grid = true, shape.nx = shape.ny = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--via-stride")) shape.via_stride = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--coarse")) options.coarse_rows = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--v-cycle-rows")) options.v_cycle_rows = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--repeat")) repeat = std::max(1, std::atoi(argv[i + 1]));
    else if (!std::strcmp(argv[i], "--v-cycle-ratio")) options.v_cycle_ratio = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--max-repeats")) options.max_repeats = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--chebyshev-rho")) options.chebyshev_rho = std::atof(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--tol")) tolerance = std::atof(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: bench_cmg (--netlist FILE | --grid N [--via-stride S]) [--repeat R] [--coarse ROWS] [--v-cycle-rows ROWS] [--v-cycle-ratio Q] [--max-repeats T] [--chebyshev-rho RHO] [--tol TOL] [--no-jacobi] [--eliminated-only] [--phases]\n");
      return 2;
    }
  }
  CsrMatrix G;
  std::vector<double> b;
  if (grid) {
    test::GridSystem s = test::make_grid_system(shape);
    G = std::move(s.G);
    b = std::move(s.b);
    std::printf("generated grid %dx%d x 2 layers, via stride %d: %d unknowns, %lld nnz\n", shape.nx, shape.ny,
                shape.via_stride, G.rows, (long long)G.nnz());
  } else if (!netlist.empty()) {
    ReducedSystem sys = reduce(parse_netlist(netlist));
    G = std::move(sys.G);
    b = std::move(sys.b);
    std::printf("%s: %d unknowns, %lld nnz\n", netlist.c_str(), G.rows, (long long)G.nnz());
  } else {
    std::fprintf(stderr, "usage: bench_cmg (--netlist FILE | --grid N [--via-stride S]) [--repeat R] [--coarse ROWS] [--v-cycle-rows ROWS] [--v-cycle-ratio Q] [--max-repeats T] [--chebyshev-rho RHO] [--tol TOL] [--no-jacobi] [--eliminated-only] [--phases]\n");
    return 2;
  }
  if (setup_only) {
    phases(G, b, options, repeat);
    return 0;
  }
  std::vector<Row> rows;
  rows.push_back(measure("cmg, chains eliminated", G, b, true, true, options, repeat, true, tolerance));
  if (plain) rows.push_back(measure("cmg, no elimination", G, b, false, true, options, repeat, true, tolerance));
  if (jacobi) {
    rows.push_back(measure("jacobi, chains eliminated", G, b, true, false, options, repeat, false, tolerance));
    if (plain) rows.push_back(measure("jacobi, no elimination", G, b, false, false, options, repeat, false, tolerance));
  }
  std::printf("\n%-28s %10s %6s %10s %10s %10s %14s\n", "method", "pcg rows", "iters", "setup s", "solve s",
              "residual", "jacobi/this");
  for (const Row& r : rows)
    std::printf("%-28s %10d %6d %10.4f %10.4f %10.2e %14.1f\n", r.name.c_str(), r.rows, r.iterations, r.setup,
                r.solve, r.residual, jacobi ? rows.back().solve / r.solve : 0.0);
  return 0;
}
