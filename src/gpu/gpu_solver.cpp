#include "gpu/gpu_solver.hpp"

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "gpu/cmg_build.hpp"
#include "gpu/cmg_coarsen.hpp"
#include "gpu/cmg_device.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/device_info.hpp"
#include "gpu/gpu_failure.hpp"
#include "gpu/host_staging.hpp"
#include "gpu/ic0_preconditioner.hpp"
#include "gpu/jacobi_device.hpp"
#include "gpu/make_preconditioner.hpp"
#include "gpu/pcg_gpu.hpp"
#include "gpu/spmv.hpp"

namespace pgsim::gpu {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

CmgDeviceOptions cmg_device_options(const GpuSolveSettings& s, CmgUploadTimes& times) {
  CmgDeviceOptions o;
  o.float_values = s.float_hierarchy;
  o.profile = s.profile;
  o.upload_times = &times;
  return o;
}

std::unique_ptr<DevicePreconditioner> make_device_preconditioner(const CsrMatrix& G, const CmgHierarchy* h,
                                                                 const GpuSolveSettings& s, CmgUploadTimes& times) {
  if (s.precond == "cmg") {
    if (!h) throw GpuFailure("the GPU CMG preconditioner needs a hierarchy");
    return make_device_cmg(*h, cmg_device_options(s, times));
  }
  if (s.precond == "jacobi") return std::make_unique<DeviceJacobi>(G);
  if (s.precond == "ic0")
    return std::make_unique<Ic0DevicePreconditioner>(G, parse_trsv_method(s.trsv.empty() ? default_trsv() : s.trsv));
  if (s.precond == "none") return std::make_unique<DeviceIdentity>(G.rows);
  throw GpuFailure("preconditioner '" + s.precond + "' has no GPU version");
}

std::vector<std::string> gpu_preconditioner_names() { return {"cmg", "jacobi", "ic0", "none"}; }

// CSR-vector: fastest on the system matrices of the IBM and generated grids (benchmarks/gpu/README.md).
std::string default_spmv_layout() { return "csr"; }

std::vector<std::string> trsv_names() { return trsv_method_names(); }

// The colour-ordered factor solved one colour per launch: fastest per PCG solve on the grids and
// ibmpg1 in benchmarks/gpu (README there), despite more iterations than the natural order.
std::string default_trsv() { return "colored"; }

namespace {

// The hierarchy of G built with `cmg`'s options once G is on the device (as A): into `device`
// where the device builds it all, else into `host`. Returns the build's seconds and its device
// part's detail.
std::pair<double, std::string> build_hierarchy(const CsrMatrix& G, const DeviceSpmv& A, const CmgOptions& cmg,
                                               const GpuSolveSettings& s, std::optional<DeviceCmgHierarchy>& device,
                                               CmgHierarchy& host) {
  const auto t0 = std::chrono::steady_clock::now();
  char detail[320];
  const std::optional<DeviceCsrView> view = A.csr();
  if (builds_hierarchy_on_device(s, cmg, G.rows)) {
    if (!view) throw std::logic_error("solve_on_gpu: an SpMV layout that keeps G as CSR has no CSR view");
    DeviceBuildTimes t;
    device = build_cmg_hierarchy_on_device(*view, cmg, &t);
    return {seconds_since(t0), "CMG hierarchy built on the device " + t.text(device->levels.size())};
  }
  // Level 0 is coarsened from the system matrix's device copy, or from a copy of its own where
  // the SpMV layout does not keep G as CSR (seg).
  std::optional<DeviceCoarsenTimes> coarsened;
  CmgOptions with = cmg;
  with.coarsen_level0 = [&](const CsrMatrix& level0) {
    if (&level0 != &G) throw std::invalid_argument("solve_on_gpu: the hierarchy's build coarsens another matrix");
    coarsened.emplace();
    if (view) return coarsen_level0_on_device(*view, &*coarsened);
    const DeviceCsr copy = staged_copy(G);
    return coarsen_level0_on_device(copy.view(), &*coarsened);
  };
  host = build_cmg_hierarchy(G, with);
  if (!coarsened) return {seconds_since(t0), ""};
  const DeviceCoarsenTimes& c = *coarsened;
  std::snprintf(detail, sizeof detail,
                "level 0 coarsened on the device: laplacian %.4f s, clustering %.4f s (%d rounds), galerkin %.4f s, "
                "copied back %.4f s",
                c.laplacian, c.clustering, c.rounds, c.galerkin, c.copy);
  return {seconds_since(t0), detail};
}

// Both solve_on_gpu: with a hierarchy given (h), or built with `cmg`'s options once G is on the device.
GpuSolveReport solve(const CsrMatrix& G, const std::vector<double>& b, std::vector<double>& x, const CmgHierarchy* h,
                     const CmgOptions* cmg, const SolveControl& control, const GpuSolveSettings& s) {
  return as_gpu_failure([&] {
    GpuSolveReport rep;
    rep.device = device_description();
    if (G.rows == 0) {  // everything was eliminated before the solve
      rep.result.converged = true;
      return rep;
    }
    const auto t0 = std::chrono::steady_clock::now();
    const SpmvLayout layout = parse_layout(s.spmv.empty() ? default_spmv_layout() : s.spmv);
    auto A = make_device_spmv(layout, G);
    rep.spmv = layout_name(layout) + " (" + A->detail() + ")";
    PGSIM_CUDA(cudaDeviceSynchronize());
    const double t_matrix = seconds_since(t0);
    CmgHierarchy built;
    std::optional<DeviceCmgHierarchy> device_built;
    char detail[256];
    if (cmg && s.precond == "cmg") {
      std::tie(rep.setup_seconds, rep.setup_detail) = build_hierarchy(G, *A, *cmg, s, device_built, built);
      h = &built;
    }
    auto uploading = [&] { return seconds_since(t0) - rep.setup_seconds; };  // the build left out
    CmgUploadTimes cmg_times;
    auto M = device_built ? make_device_cmg(std::move(*device_built), cmg_device_options(s, cmg_times))
                          : make_device_preconditioner(G, h, s, cmg_times);
    DeviceBuffer<double> db(b), dx(x);
    GpuPcg pcg(G.rows, !s.profile);
    PGSIM_CUDA(cudaDeviceSynchronize());
    const double t_vectors = uploading();
    pcg.prepare(*A, *M, control);
    rep.upload_seconds = uploading();
    std::snprintf(detail, sizeof detail, "system matrix %.3f s, preconditioner and vectors %.3f s, PCG graphs %.4f s",
                  t_matrix, t_vectors - t_matrix, rep.upload_seconds - t_vectors);
    rep.upload_detail = detail;
    if (s.precond == "cmg") {
      std::snprintf(detail, sizeof detail, " (cmg: allocate %.3f, copy %.3f, long items %.3f, coarse inverse %.3f)",
                    cmg_times.allocate, cmg_times.copy, cmg_times.long_items, cmg_times.coarse_inverse);
      rep.upload_detail += detail;
    }

    const auto t1 = std::chrono::steady_clock::now();
    rep.result = pcg.solve(*A, db.data(), dx.data(), *M, control);
    const double t_pcg = seconds_since(t1);
    dx.download(x.data());
    rep.solve_seconds = seconds_since(t1);
    std::snprintf(detail, sizeof detail, "PCG %.4f s, x to the host %.4f s", t_pcg, rep.solve_seconds - t_pcg);
    rep.solve_detail = detail;
    rep.levels = M->levels();
    rep.peak_device_bytes = peak_device_bytes().load();
    return rep;
  });
}

}  // namespace

Level0Coarsening level0_coarsening_on(int device) {
  return [device](const CsrMatrix& G) {
    return as_gpu_failure([&] {
      PGSIM_CUDA(cudaSetDevice(device));
      const DeviceCsr copy = staged_copy(G);
      return coarsen_level0_on_device(copy.view());
    });
  };
}

GpuSolveReport solve_on_gpu(const CsrMatrix& G, const std::vector<double>& b, std::vector<double>& x,
                            const CmgHierarchy* h, const SolveControl& control, const GpuSolveSettings& s) {
  return solve(G, b, x, h, nullptr, control, s);
}

bool builds_hierarchy_on_device(const GpuSolveSettings& s, const CmgOptions& cmg, int32_t rows) {
  return !s.float_hierarchy && parse_layout(s.spmv.empty() ? default_spmv_layout() : s.spmv) != SpmvLayout::seg &&
         builds_on_device(cmg, rows);
}

GpuSolveReport solve_on_gpu(const CsrMatrix& G, const std::vector<double>& b, std::vector<double>& x,
                            const CmgOptions& cmg, const SolveControl& control, const GpuSolveSettings& s) {
  return solve(G, b, x, nullptr, &cmg, control, s);
}

}  // namespace pgsim::gpu
