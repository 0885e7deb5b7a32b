#include "gpu/distributed_pcg.hpp"

#include <chrono>

#include "gpu/cuda_check.hpp"
#include "gpu/cmg_build.hpp"
#include "gpu/device_info.hpp"
#include "gpu/gpu_failure.hpp"
#include "gpu/halo_spmv.hpp"
#include "gpu/make_preconditioner.hpp"
#include "gpu/nccl_comm.hpp"
#include "gpu/pcg_gpu.hpp"

namespace pgsim::gpu {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

GpuBlockReport solve_block_on_gpu(const dist::RankBlock& block, const CmgHierarchy* hierarchy, DeviceHierarchy* built,
                                  const CoarseCorrectionData* coarse, const SolveControl& control,
                                  const GpuSolveSettings& settings, NcclCommAhead& ahead) {
  return as_gpu_failure([&] {
    GpuBlockReport rep;
    const auto t0 = std::chrono::steady_clock::now();
    const NcclComm& nccl = ahead.get();
    rep.communicator_wait_seconds = seconds_since(t0);
    PGSIM_CUDA(cudaSetDevice(nccl.device()));  // the thread that made the communicator selected it for itself only
    rep.device = device_description();
    NcclHaloExchange exchange(block, nccl);
    NcclScalarSum across_ranks(nccl);
    HaloSpmv A(block, parse_layout(settings.spmv.empty() ? default_spmv_layout() : settings.spmv), exchange);
    CmgUploadTimes cmg;
    std::unique_ptr<DevicePreconditioner> M =
        built && settings.precond == "cmg" ? make_device_cmg(built->take(), cmg_device_options(settings, cmg))
                                           : make_device_preconditioner(block.interior, hierarchy, settings, cmg);
    if (coarse) M = std::make_unique<DeviceTwoLevel>(std::move(M), *coarse, across_ranks);
    DeviceBuffer<double> b(block.b), x(size_t(block.rows()));
    PGSIM_CUDA(cudaMemset(x.data(), 0, x.size() * sizeof(double)));
    GpuPcg pcg(block.rows(), !settings.profile, &across_ranks);
    pcg.prepare(A, *M, control);
    PGSIM_CUDA(cudaDeviceSynchronize());
    rep.upload_seconds = seconds_since(t0);

    const auto t1 = std::chrono::steady_clock::now();
    rep.result = pcg.solve(A, b.data(), x.data(), *M, control);
    rep.x = x.download();
    rep.solve_seconds = seconds_since(t1);
    rep.levels = M->levels();
    rep.peak_device_bytes = peak_device_bytes().load();
    return rep;
  });
}

}  // namespace pgsim::gpu
