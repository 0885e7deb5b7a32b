#pragma once
#include <cuda_runtime_api.h>

namespace pgsim::test {
// values[0, count) *= factor on the device, queued on `stream` (count <= 32).
void scale_on_device(double* values, int count, double factor, cudaStream_t stream);
}  // namespace pgsim::test
