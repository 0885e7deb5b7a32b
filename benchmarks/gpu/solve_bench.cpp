// solve_bench: the GPU CMG-PCG solve of one netlist against its baselines, in one run.
// Usage: solve_bench NETLIST [--tol 1e-8] [--reps 5] [--v-cycle-rows R] [--v-cycle-ratio Q] [--coarse-rows R]
//        [--max-repeats T] [--chebyshev-rho RHO]  (CmgOptions)
//        [--tail-rows R] [--tail-blocks B] [--tail-max-coarse C]
//        (CmgDeviceOptions of gpu-cmg, its variants and the profile)
//        [--no-cycle-sweep]  (skip the v_cycle_rows / v_cycle_ratio sweep)
//        [--no-weights-sweep]  (skip the max_repeats / chebyshev_rho sweep)
//        [--setup-only]  (hierarchy + upload --reps times with their phase breakdown, no solves)
// Pipeline as in pgsim: parse, reduce, chain elimination, CMG hierarchy on the CPU, one upload.
// Then, all from this run:
//   gpu-cmg          GPU PCG + device CMG cycle (median solve time of warm repeats)
//   gpu-cmg-f32      the same with float32 hierarchy values
//   gpu-cmg-narrow   gpu-cmg with fixed lane widths on every level (CmgDeviceOptions::widen_lanes off)
//   gpu-cmg-serial   gpu-cmg without programmatic dependent launches (dependent_launches off)
//   gpu-cmg-late     gpu-cmg with the kernels' fixed data loaded after the wait (fetch_early off)
//   gpu-jacobi-cusp  GPU PCG + Jacobi with cuSPARSE SpMV (the vendor-library baseline)
//   cpu-cmg          CPU PCG + CPU CMG cycle (the same hierarchy)
// and the per-iteration time of gpu-cmg next to its memory-bandwidth floor: the bytes its
// kernels must move per iteration (every array a kernel touches, read or written once) divided
// by the device-to-device copy bandwidth measured in the same run. Last, a per-level profile
// (CUDA events per kernel; time of the one-block tail kernel booked on its first level).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <omp.h>

#include "bench_util.hpp"
#include "cmg/builder.hpp"
#include "cmg/cmg_preconditioner.hpp"
#include "gpu/cmg_device.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/device_info.hpp"
#include "gpu/jacobi_device.hpp"
#include "gpu/pcg_gpu.hpp"
#include "gpu/spmv.hpp"
#include "mna/chain_elimination.hpp"
#include "mna/reduce.hpp"
#include "parser/netlist.hpp"
#include "pcg/pcg_cpu.hpp"

using namespace pgsim;
using Clock = std::chrono::steady_clock;

namespace {

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Hierarchy build and upload of G, b and the hierarchy, timed by phase as pgsim does them.
struct Setup {
  CmgHierarchy h;
  std::unique_ptr<gpu::DeviceSpmv> A;
  std::unique_ptr<gpu::DevicePreconditioner> M;
  CmgBuildTimes build;
  gpu::CmgUploadTimes cmg;
  double hierarchy = 0, spmv = 0, vectors = 0, upload = 0;
};

Setup setup(const CsrMatrix& G, const std::vector<double>& b, const CmgOptions& options,
            const gpu::CmgDeviceOptions& device) {
  Setup s;
  auto t0 = Clock::now();
  s.h = build_cmg_hierarchy(G, options, &s.build);
  s.hierarchy = since(t0);
  t0 = Clock::now();
  s.A = gpu::make_device_spmv(gpu::SpmvLayout::csr, G);
  PGSIM_CUDA(cudaDeviceSynchronize());
  s.spmv = since(t0);
  gpu::CmgDeviceOptions o = device;
  o.upload_times = &s.cmg;
  s.M = gpu::make_device_cmg(s.h, o);
  const auto t1 = Clock::now();
  gpu::DeviceBuffer<double> db(b), dx(b.size());
  gpu::GpuPcg pcg(G.rows, true);
  PGSIM_CUDA(cudaDeviceSynchronize());
  s.vectors = since(t1);
  s.upload = since(t0);
  return s;
}

void print_setup(const Setup& s) {
  const CmgBuildTimes& t = s.build;
  double phase[5] = {0, 0, 0, 0, 0};
  for (const auto& l : t.levels) {
    phase[0] += l.clustering;
    phase[1] += l.galerkin;
    phase[2] += l.renumber;
    phase[3] += l.permute;
    phase[4] += l.inv_diag;
  }
  std::printf("hierarchy %.3f s: laplacian %.3f, clustering %.3f, galerkin %.3f, renumber %.3f, permute %.3f, "
              "inv_diag %.3f, coarse factor %.3f (level 0: clustering %.3f, galerkin %.3f, permute %.3f)\n",
              s.hierarchy, t.laplacian, phase[0], phase[1], phase[2], phase[3], phase[4], t.coarse_factor,
              t.levels[0].clustering, t.levels[0].galerkin, t.levels[0].permute);
  std::printf("upload %.3f s: system matrix %.3f, cmg %.3f (allocate %.3f, copy %.3f, long items %.3f, coarse inverse "
              "%.3f), vectors + pcg workspace %.3f; hierarchy + upload %.3f s\n",
              s.upload, s.spmv, s.cmg.total, s.cmg.allocate, s.cmg.copy, s.cmg.long_items, s.cmg.coarse_inverse,
              s.vectors, s.hierarchy + s.upload);
}

struct Timed {
  SolveResult result;
  double seconds = 0;  // median
};

// Median wall time of `reps` solves from x = 0 after one warm-up solve (which builds the graphs).
Timed time_gpu(gpu::GpuPcg& pcg, gpu::DeviceSpmv& A, gpu::DevicePreconditioner& M, const gpu::DeviceBuffer<double>& b,
               gpu::DeviceBuffer<double>& x, const SolveControl& control, int reps) {
  std::vector<double> times;
  Timed t;
  for (int i = 0; i <= reps; ++i) {
    PGSIM_CUDA(cudaMemset(x.data(), 0, x.size() * sizeof(double)));
    PGSIM_CUDA(cudaDeviceSynchronize());
    const auto t0 = Clock::now();
    t.result = pcg.solve(A, b.data(), x.data(), M, control);
    if (i > 0) times.push_back(since(t0));
  }
  std::sort(times.begin(), times.end());
  t.seconds = times[times.size() / 2];
  return t;
}

// Device-to-device copy bandwidth (bytes read + written per second), 1 GiB, median of 10.
double copy_bandwidth() {
  const size_t bytes = size_t(1) << 30;
  gpu::DeviceBuffer<char> a(bytes), b(bytes);
  const double ms = bench::median_ms(nullptr, 3, 10, [&](cudaStream_t s) {
    PGSIM_CUDA(cudaMemcpyAsync(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice, s));
  });
  return 2.0 * double(bytes) / (ms * 1e-3);
}

// Bytes one PCG iteration with the device CMG must move (see the header comment).
double iteration_bytes(const CsrMatrix& G, const CmgHierarchy& h, size_t value_bytes) {
  const double n = G.rows, V = double(value_bytes);
  double bytes = double(G.nnz()) * 12 + n * 20;  // q = A p: values, columns, offsets, p, q
  bytes += n * 8 * (2 + 6 + 2 + 3);              // pq; x, r update; rz; p = z + beta p
  bytes += n * 20 * 2;                           // r into level 0 numbering, z back out
  for (size_t l = 0; l + 1 < h.levels.size(); ++l) {
    double visits = 1;
    for (size_t k = 0; k < l; ++k) visits *= h.levels[k].repeats;
    const CmgLevel& L = h.levels[l];
    const double rows = L.A.rows, nnz = double(L.A.nnz()), clusters = double(L.cluster_ptr.size()) - 1;
    const double matrix = nnz * (4 + V) + rows * 4;
    // First repeat: x = invD b formed on the fly (b, invD read); later ones read x too.
    const double first = (matrix + rows * (8 + V) + clusters * (4 + 8)) +          // restrict
                         (matrix + rows * (8 + V + 4 + 8) + clusters * 8);         // prolong + smooth
    const double later = (matrix + rows * (8 + 8) + clusters * (4 + 8)) +
                         (matrix + rows * (8 + V + 4 + 8 + 8) + clusters * 8);
    bytes += visits * (first + (L.repeats - 1) * later);
  }
  double visits = 1;
  for (size_t k = 0; k + 1 < h.levels.size(); ++k) visits *= h.levels[k].repeats;
  const double nc = h.levels.back().A.rows;
  bytes += visits * nc * nc * 8;  // dense coarse inverse
  return bytes;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: solve_bench NETLIST [--tol T] [--reps N] [--v-cycle-rows R] [--v-cycle-ratio Q] [--coarse-rows R]\n");
    return 2;
  }
  double tol = 1e-8;
  int reps = 5;
  CmgOptions cmg_options;
  gpu::CmgDeviceOptions device;
  bool setup_only = false, cycle_sweep = true, weights_sweep = true;
  for (int i = 2; i < argc; ++i) {
    if (std::string(argv[i]) == "--setup-only") setup_only = true;
    if (std::string(argv[i]) == "--no-cycle-sweep") cycle_sweep = false;
    if (std::string(argv[i]) == "--no-weights-sweep") weights_sweep = false;
    if (i + 1 == argc) break;
    if (std::string(argv[i]) == "--tol") tol = std::atof(argv[i + 1]);
    if (std::string(argv[i]) == "--reps") reps = std::atoi(argv[i + 1]);
    if (std::string(argv[i]) == "--v-cycle-rows") cmg_options.v_cycle_rows = std::atoi(argv[i + 1]);
    if (std::string(argv[i]) == "--v-cycle-ratio") cmg_options.v_cycle_ratio = std::atoi(argv[i + 1]);
    if (std::string(argv[i]) == "--coarse-rows") cmg_options.coarse_rows = std::atoi(argv[i + 1]);
    if (std::string(argv[i]) == "--max-repeats") cmg_options.max_repeats = std::atoi(argv[i + 1]);
    if (std::string(argv[i]) == "--chebyshev-rho") cmg_options.chebyshev_rho = std::atof(argv[i + 1]);
    if (std::string(argv[i]) == "--tail-rows") device.tail_rows = std::atoi(argv[i + 1]);
    if (std::string(argv[i]) == "--tail-blocks") device.tail_blocks = std::atoi(argv[i + 1]);
    if (std::string(argv[i]) == "--tail-max-coarse") device.tail_max_coarse = std::atoi(argv[i + 1]);
  }
  std::string why;
  if (!gpu::device_available(&why)) {
    std::fprintf(stderr, "no GPU: %s\n", why.c_str());
    return 77;
  }
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  PGSIM_CUDA(cudaFree(nullptr));  // create the context before any timing

  auto t0 = Clock::now();
  Netlist netlist = parse_netlist(argv[1]);
  ReducedSystem sys = reduce(netlist);
  const double t_read = since(t0);
  t0 = Clock::now();
  EliminatedSystem kept = eliminate_chains(sys.G, sys.b);
  const double t_elim = since(t0);
  const CsrMatrix& G = kept.G;
  if (setup_only) {
    std::printf("%s: %d unknowns -> %d after chain elimination (%.3f s), %d OpenMP threads\n", argv[1], sys.G.rows,
                G.rows, t_elim, omp_get_max_threads());
    for (int r = 0; r < reps; ++r) print_setup(setup(G, kept.b, cmg_options, device));
    return 0;
  }
  Setup first = setup(G, kept.b, cmg_options, device);
  const CmgHierarchy& h = first.h;
  auto& A = first.A;
  auto& M = first.M;
  const double t_hier = first.hierarchy, t_upload = first.upload;

  SolveControl control;
  control.tolerance = tol;
  control.max_iterations = 5000;

  gpu::DeviceBuffer<double> db(kept.b), dx(kept.b.size());
  gpu::GpuPcg pcg(G.rows, true);

  std::printf("%s\n%s: %d nodes, %d unknowns -> %d after chain elimination, %lld nonzeros; tol %.0e; median of %d\n\n",
              gpu::device_description().c_str(), argv[1], int(netlist.node_count() - 1), sys.G.rows, G.rows,
              (long long)G.nnz(), tol, reps);
  std::printf("read+reduce %.3f s, chain elimination %.3f s, hierarchy %.3f s (%zu levels), upload %.3f s: "
              "hierarchy + upload %.3f s\n\n",
              t_read, t_elim, t_hier, h.levels.size(), t_upload, t_hier + t_upload);
  print_setup(first);
  std::printf("\n");

  const Timed cmg = time_gpu(pcg, *A, *M, db, dx, control, reps);
  // gpu-cmg with one device-cycle option changed, on the same hierarchy.
  auto time_device_cmg = [&](const gpu::CmgDeviceOptions& options) {
    auto variant = gpu::make_device_cmg(h, options);
    return time_gpu(pcg, *A, *variant, db, dx, control, reps);
  };
  gpu::CmgDeviceOptions f32 = device, narrow = device, serial = device, late = device;
  f32.float_values = true;
  narrow.widen_lanes = false;
  serial.dependent_launches = false;
  late.fetch_early = false;
  const Timed cmg32 = time_device_cmg(f32), cmg_narrow = time_device_cmg(narrow), cmg_serial = time_device_cmg(serial),
              cmg_late = time_device_cmg(late);
  auto Acusp = gpu::make_device_spmv(gpu::SpmvLayout::cusparse, G);
  gpu::DeviceJacobi jacobi(G);
  const Timed jac = time_gpu(pcg, *Acusp, jacobi, db, dx, control, std::max(1, reps / 2));

  CmgPreconditioner cpu_m(h);
  std::vector<double> x_cpu(kept.b.size(), 0.0);
  t0 = Clock::now();
  const SolveResult cpu = pcg_cpu(G, kept.b, x_cpu, cpu_m, control);
  const double t_cpu = since(t0);

  const double bw = copy_bandwidth();
  const double per_it = cmg.seconds / std::max(1, cmg.result.iterations);
  const double floor_it = iteration_bytes(G, h, 8) / bw;
  const double floor_it32 = iteration_bytes(G, h, 4) / bw;

  std::printf("| solver          | iterations | rel. residual | solve ms | per iteration us | floor us | vs gpu-cmg |\n");
  std::printf("|-----------------|-----------:|--------------:|---------:|-----------------:|---------:|-----------:|\n");
  auto row = [&](const char* name, const SolveResult& r, double s, double floor_us) {
    std::printf("| %-15s | %10d | %13.2e | %8.3f | %16.1f | %8s | %9.2fx |\n", name, r.iterations, r.relative_residual,
                s * 1e3, s * 1e6 / std::max(1, r.iterations),
                floor_us > 0 ? std::to_string(int(floor_us + 0.5)).c_str() : "", s / cmg.seconds);
  };
  row("gpu-cmg", cmg.result, cmg.seconds, floor_it * 1e6);
  row("gpu-cmg-f32", cmg32.result, cmg32.seconds, floor_it32 * 1e6);
  row("gpu-cmg-narrow", cmg_narrow.result, cmg_narrow.seconds, floor_it * 1e6);
  row("gpu-cmg-serial", cmg_serial.result, cmg_serial.seconds, floor_it * 1e6);
  row("gpu-cmg-late", cmg_late.result, cmg_late.seconds, floor_it * 1e6);
  row("gpu-jacobi-cusp", jac.result, jac.seconds, 0);
  row("cpu-cmg", cpu, t_cpu, 0);
  std::printf("\nfloor: %.1f MB per gpu-cmg iteration (%.1f MB with f32 values) at %.0f GB/s measured copy bandwidth; "
              "gpu-cmg per iteration = %.2fx its floor\n\n",
              iteration_bytes(G, h, 8) / 1e6, iteration_bytes(G, h, 4) / 1e6, bw / 1e9, per_it / floor_it);

  // Where the tail kernel should start, and with how many blocks: solve time for each against
  // its byte floor (the tail moves the same bytes as the launches it replaces).
  std::printf("tail kernel (levels with at most tail_rows rows run in one cluster of tail_blocks blocks, if the "
              "coarsest has at most tail_max_coarse rows):\n");
  const gpu::CmgDeviceOptions defaults;
  struct TailCase {
    int32_t rows;
    int blocks;
    int32_t max_coarse;
  };
  for (const TailCase c : {TailCase{0, 8, 1024}, TailCase{6144, 1, 1024}, TailCase{6144, 8, 512},
                           TailCase{6144, 8, 1024}, TailCase{6144, 8, 2048}, TailCase{65536, 8, 1024}}) {
    gpu::CmgDeviceOptions o;
    o.tail_rows = c.rows;
    o.tail_blocks = c.blocks;
    o.tail_max_coarse = c.max_coarse;
    const Timed t = time_device_cmg(o);
    const bool is_default = c.rows == defaults.tail_rows && c.blocks == defaults.tail_blocks &&
                            c.max_coarse == defaults.tail_max_coarse;
    const double us = t.seconds * 1e6 / std::max(1, t.result.iterations);
    std::printf("  tail_rows %6d, tail_blocks %d, tail_max_coarse %4d: %d iterations, solve %.3f ms, %.1f us/iteration "
                "(%.2fx floor)%s\n",
                c.rows, c.blocks, c.max_coarse, t.result.iterations, t.seconds * 1e3, us, us / (floor_it * 1e6),
                is_default ? " (default)" : "");
  }
  std::printf("\n");

  // A fresh hierarchy of the same system with the cycle options `o`: one row of a cycle sweep,
  // iterations against time per iteration and its byte floor.
  const CmgOptions cmg_defaults;
  auto sweep_row = [&](const CmgOptions& o, const std::string& label, bool is_default) {
    const CmgHierarchy hs = build_cmg_hierarchy(G, o);
    auto Ms = gpu::make_device_cmg(hs, device);
    const Timed t = time_gpu(pcg, *A, *Ms, db, dx, control, reps);
    std::string repeats;
    for (const auto& l : hs.levels) repeats += (repeats.empty() ? "" : ",") + std::to_string(l.repeats);
    std::printf("  %s (repeats %s): %3d iterations, solve %8.3f ms, %7.1f us/iteration, floor %5.0f us%s\n",
                label.c_str(), repeats.c_str(), t.result.iterations, t.seconds * 1e3,
                t.seconds * 1e6 / std::max(1, t.result.iterations), iteration_bytes(G, hs, 8) / bw * 1e6,
                is_default ? " (default)" : "");
  };
  char label[96];

  // The repeats policy at the bottom (CmgOptions::v_cycle_rows, v_cycle_ratio).
  if (cycle_sweep) {
    std::printf("v_cycle_rows / v_cycle_ratio (t_l = 1 where the next level has at most v_cycle_rows rows or at most "
                "1/v_cycle_ratio of level 0's):\n");
    for (const auto& [rows, ratio] : {std::pair{0, 0}, std::pair{2000, 0}, std::pair{4000, 0}, std::pair{8000, 0},
                                     std::pair{30000, 0}, std::pair{150000, 0}, std::pair{2000, 128},
                                     std::pair{2000, 256}, std::pair{2000, 512}, std::pair{2000, 1024}}) {
      CmgOptions o = cmg_options;
      o.v_cycle_rows = rows;
      o.v_cycle_ratio = ratio;
      std::snprintf(label, sizeof label, "v_cycle_rows %6d, v_cycle_ratio %4d", rows, ratio);
      sweep_row(o, label, rows == cmg_defaults.v_cycle_rows && ratio == cmg_defaults.v_cycle_ratio);
    }
    std::printf("\n");
  }

  // The repeats and their weights (CmgOptions::max_repeats, chebyshev_rho): fewer visits of the
  // small levels against iterations.
  if (weights_sweep) {
    std::printf("max_repeats / chebyshev_rho (repeats capped at max_repeats, weighted as the Chebyshev polynomial of "
                "[a, rho] where t_l >= 2):\n");
    for (const auto& [max_repeats, rho] : {std::pair{0, 0.0}, std::pair{0, 0.7}, std::pair{2, 0.0}, std::pair{2, 0.5},
                                          std::pair{2, 0.7}, std::pair{2, 0.85}, std::pair{1, 0.0}}) {
      CmgOptions o = cmg_options;
      o.max_repeats = max_repeats;
      o.chebyshev_rho = rho;
      std::snprintf(label, sizeof label, "max_repeats %d, chebyshev_rho %.2f", max_repeats, rho);
      sweep_row(o, label, max_repeats == cmg_defaults.max_repeats && rho == cmg_defaults.chebyshev_rho);
    }
    std::printf("\n");
  }

  // Per-level kernel time: one solve with per-kernel CUDA events (no graphs).
  gpu::CmgDeviceOptions profiled = device;
  profiled.profile = true;
  auto Mp = gpu::make_device_cmg(h, profiled);
  gpu::GpuPcg pcg_p(G.rows, false);
  PGSIM_CUDA(cudaMemset(dx.data(), 0, dx.size() * sizeof(double)));
  const SolveResult rp = pcg_p.solve(*A, db.data(), dx.data(), *Mp, control);
  double total = 0;
  for (const auto& l : Mp->levels()) total += l.seconds;
  std::printf("per-level profile (%d iterations, kernel time from CUDA events):\n", rp.iterations);
  std::printf("| level |     rows |      nnz | repeats | visits/apply |    ms | share |\n");
  std::printf("|------:|---------:|---------:|--------:|-------------:|------:|------:|\n");
  const auto levels = Mp->levels();
  for (size_t l = 0; l < levels.size(); ++l)
    std::printf("| %5zu | %8lld | %8lld | %7d | %12.0f | %5.2f | %4.1f%% |\n", l, (long long)levels[l].rows,
                (long long)levels[l].nnz, levels[l].repeats, levels[l].visits, levels[l].seconds * 1e3,
                total > 0 ? 100 * levels[l].seconds / total : 0.0);
  std::printf("(a level with 0 ms runs inside the one-block tail kernel booked on the first tail level)\n");
  return 0;
}
