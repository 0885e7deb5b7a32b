#pragma once
// The device preconditioner GpuSolveSettings::precond names, for a system matrix G (CUDA side;
// shared by solve_on_gpu and the transient stepper).
#include <memory>

#include "cmg/hierarchy.hpp"
#include "gpu/cmg_device.hpp"
#include "gpu/device_preconditioner.hpp"
#include "gpu/gpu_solver.hpp"
#include "mna/csr.hpp"

namespace pgsim::gpu {

// cmg needs `hierarchy` (built for G); `times` gets the CMG upload's parts. GpuFailure for a
// name without a GPU version or cmg without a hierarchy.
std::unique_ptr<DevicePreconditioner> make_device_preconditioner(const CsrMatrix& G, const CmgHierarchy* hierarchy,
                                                                 const GpuSolveSettings& settings,
                                                                 CmgUploadTimes& times);

// The CMG cycle's device options from the solve's settings, its upload's parts into `times`.
CmgDeviceOptions cmg_device_options(const GpuSolveSettings& settings, CmgUploadTimes& times);

}  // namespace pgsim::gpu
