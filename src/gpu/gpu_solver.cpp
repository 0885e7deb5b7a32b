#include "gpu/gpu_solver.hpp"

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>

#include "gpu/cmg_coarsen.hpp"
#include "gpu/cmg_device.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/device_info.hpp"
#include "gpu/gpu_failure.hpp"
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

std::unique_ptr<DevicePreconditioner> make_device_preconditioner(const CsrMatrix& G, const CmgHierarchy* h,
                                                                 const GpuSolveSettings& s, CmgUploadTimes& times) {
  if (s.precond == "cmg") {
    if (!h) throw GpuFailure("the GPU CMG preconditioner needs a hierarchy");
    CmgDeviceOptions o;
    o.float_values = s.float_hierarchy;
    o.profile = s.profile;
    o.upload_times = &times;
    return make_device_cmg(*h, o);
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

// Both solve_on_gpu: with a hierarchy given (h), or built by `build` once G is on the device.
GpuSolveReport solve(const CsrMatrix& G, const std::vector<double>& b, std::vector<double>& x, const CmgHierarchy* h,
                     const HierarchyBuild* build, const SolveControl& control, const GpuSolveSettings& s) {
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
    char detail[256];
    if (build && s.precond == "cmg") {
      const auto t_build = std::chrono::steady_clock::now();
      // Level 0 is coarsened from the system matrix's device copy, or from a copy of its own
      // where the SpMV layout does not keep G as CSR (seg).
      std::optional<DeviceCoarsenTimes> coarsened;
      built = (*build)([&](const CsrMatrix& level0) {
        if (&level0 != &G) throw std::invalid_argument("solve_on_gpu: the hierarchy's build coarsens another matrix");
        coarsened.emplace();
        if (const std::optional<DeviceCsrView> view = A->csr()) return coarsen_level0_on_device(*view, &*coarsened);
        const DeviceCsr copy(G);
        return coarsen_level0_on_device(copy.view(), &*coarsened);
      });
      h = &built;
      rep.setup_seconds = seconds_since(t_build);
      if (coarsened) {
        const DeviceCoarsenTimes& c = *coarsened;
        std::snprintf(detail, sizeof detail,
                      "level 0 coarsened on the device: laplacian %.4f s, clustering %.4f s (%d rounds), galerkin %.4f s, "
                      "copied back %.4f s",
                      c.laplacian, c.clustering, c.rounds, c.galerkin, c.copy);
        rep.setup_detail = detail;
      }
    }
    auto uploading = [&] { return seconds_since(t0) - rep.setup_seconds; };  // the build left out
    CmgUploadTimes cmg;
    auto M = make_device_preconditioner(G, h, s, cmg);
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
                    cmg.allocate, cmg.copy, cmg.long_items, cmg.coarse_inverse);
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
      const DeviceCsr copy(G);
      return coarsen_level0_on_device(copy.view());
    });
  };
}

GpuSolveReport solve_on_gpu(const CsrMatrix& G, const std::vector<double>& b, std::vector<double>& x,
                            const CmgHierarchy* h, const SolveControl& control, const GpuSolveSettings& s) {
  return solve(G, b, x, h, nullptr, control, s);
}

GpuSolveReport solve_on_gpu(const CsrMatrix& G, const std::vector<double>& b, std::vector<double>& x,
                            const HierarchyBuild& build, const SolveControl& control, const GpuSolveSettings& s) {
  return solve(G, b, x, nullptr, &build, control, s);
}

}  // namespace pgsim::gpu
