#include "gpu/distributed_pcg.hpp"

#include <chrono>
#include <memory>

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

// The solve's device objects, each on the heap where another holds a reference to it; released
// (when they are) in the reverse of this order, every user before what it uses.
struct BlockSolveState {
  std::unique_ptr<NcclHaloExchange> exchange;
  std::unique_ptr<NcclScalarSum> across_ranks;
  std::unique_ptr<HaloSpmv> A;
  std::unique_ptr<DevicePreconditioner> M;
  std::unique_ptr<DeviceBuffer<double>> b, x;
  std::unique_ptr<GpuPcg> pcg;
};

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
    auto state = std::make_shared<BlockSolveState>();
    BlockSolveState& s = *state;
    s.exchange = std::make_unique<NcclHaloExchange>(block, nccl);
    s.across_ranks = std::make_unique<NcclScalarSum>(nccl);
    s.A = std::make_unique<HaloSpmv>(block, parse_layout(settings.spmv.empty() ? default_spmv_layout() : settings.spmv),
                                     *s.exchange);
    CmgUploadTimes cmg;
    s.M = built && settings.precond == "cmg" ? make_device_cmg(built->take(), cmg_device_options(settings, cmg))
                                             : make_device_preconditioner(block.interior, hierarchy, settings, cmg);
    if (coarse) s.M = std::make_unique<DeviceTwoLevel>(std::move(s.M), *coarse, *s.across_ranks);
    s.b = std::make_unique<DeviceBuffer<double>>(block.b);
    s.x = std::make_unique<DeviceBuffer<double>>(size_t(block.rows()));
    PGSIM_CUDA(cudaMemset(s.x->data(), 0, s.x->size() * sizeof(double)));
    s.pcg = std::make_unique<GpuPcg>(block.rows(), !settings.profile, s.across_ranks.get());
    s.pcg->prepare(*s.A, *s.M, control);
    PGSIM_CUDA(cudaDeviceSynchronize());
    rep.upload_seconds = seconds_since(t0);

    const auto t1 = std::chrono::steady_clock::now();
    rep.result = s.pcg->solve(*s.A, s.b->data(), s.x->data(), *s.M, control);
    rep.x = s.x->download();
    rep.solve_seconds = seconds_since(t1);
    rep.levels = s.M->levels();
    rep.peak_device_bytes = peak_device_bytes().load();
    rep.device_state = std::move(state);
    return rep;
  });
}

}  // namespace pgsim::gpu
