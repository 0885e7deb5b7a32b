// A device kernel for test_gpu_halo: values *= factor, in stream order.
#include "gpu_scale.hpp"

namespace pgsim::test {
namespace {
__global__ void scale_kernel(double* values, int count, double factor) {
  const int i = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < count) values[i] *= factor;
}
}  // namespace

void scale_on_device(double* values, int count, double factor, cudaStream_t stream) {
  scale_kernel<<<1, 32, 0, stream>>>(values, count, factor);
}
}  // namespace pgsim::test
