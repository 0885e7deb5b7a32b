#pragma once
// One rank's share of the distributed PCG on its GPU (issue 17; docs/distributed.md): the
// rank's RankBlock uploaded (interior in the SpMV layout, boundary, send lists), its block
// preconditioner on the device (for cmg, the CMG hierarchy the caller built for its block),
// with or without the global coarse correction (gpu/two_level_device.hpp), and the one GPU PCG
// loop (gpu/pcg_gpu.hpp) over a HaloSpmv with NCCL halo exchange and NCCL all-reduced scalars.
// Plain C++ (no CUDA headers), like gpu_solver.hpp.
#include <memory>
#include <string>
#include <vector>

#include "cmg/hierarchy.hpp"
#include "dist/partition.hpp"
#include "gpu/device_hierarchy.hpp"
#include "gpu/gpu_solver.hpp"
#include "gpu/nccl_comm_ahead.hpp"
#include "gpu/two_level_device.hpp"

namespace pgsim::gpu {

struct GpuBlockReport {
  SolveResult result;  // the same on every rank
  std::vector<double> x;                // this rank's rows of the solution, local order
  double upload_seconds = 0;            // block, preconditioner, PCG graphs, and any wait for the communicator
  double communicator_wait_seconds = 0;  // of upload_seconds: waiting for NcclCommAhead's thread
  double solve_seconds = 0;             // PCG, from its first kernel to x back on the host
  size_t peak_device_bytes = 0;         // this rank's DeviceBuffers at their peak (NCCL's own buffers excluded)
  std::string device;                   // this rank's GPU
  std::vector<LevelStats> levels;
  // The solve's device objects (the block, its preconditioner, the PCG's vectors and graphs),
  // released with the last holder. Releasing waits on the device (cudaFree), so a caller about
  // to end may keep them to the process's end instead, as one process leaves its CUDA context.
  std::shared_ptr<void> device_state;
};

// Collective over `nccl`'s ranks (every rank calls it with its own block). For settings.precond
// cmg, the CMG hierarchy of the block (block.interior; with a coarse correction, softened as
// dist::softened_block_hierarchy's) is required: `built` on the rank's GPU (its levels taken
// from it), else `hierarchy` on the host. `coarse`: the coarse correction's data, or null for the
// block preconditioner alone (every rank alike). settings.profile launches kernel by kernel
// instead of replaying CUDA graphs. GpuFailure on a CUDA or NCCL failure (the communicator's
// included).
GpuBlockReport solve_block_on_gpu(const dist::RankBlock& block, const CmgHierarchy* hierarchy, DeviceHierarchy* built,
                                  const CoarseCorrectionData* coarse, const SolveControl& control,
                                  const GpuSolveSettings& settings, NcclCommAhead& nccl);

}  // namespace pgsim::gpu
