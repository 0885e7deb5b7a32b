#pragma once
// A preconditioner applied on the device: z = B r, with r and z device arrays of the
// system's size, work issued on `stream` (no host synchronization, so it can be captured
// in a CUDA graph). B must be fixed, symmetric and positive definite.
#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "gpu/instance_id.hpp"
#include "pcg/preconditioner.hpp"

namespace pgsim::gpu {

class DevicePreconditioner {
 public:
  virtual ~DevicePreconditioner() = default;
  virtual void apply(const double* r, double* z, cudaStream_t stream) = 0;
  virtual std::string name() const = 0;
  virtual std::vector<LevelStats> levels() const { return {}; }
  InstanceId instance;  // what GpuPcg keys its captured graphs on
};

}  // namespace pgsim::gpu
