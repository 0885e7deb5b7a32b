#include "gpu/jacobi_device.hpp"

#include "gpu/launch.cuh"

namespace pgsim::gpu {
namespace {

__global__ void scale_kernel(const double* __restrict__ d, const double* __restrict__ r, double* __restrict__ z,
                             int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) z[i] = d[i] * r[i];
}

std::vector<double> inverse_diagonal(const CsrMatrix& A) {
  std::vector<double> d = A.diagonal();
  for (double& v : d) v = 1.0 / v;  // reduce() guarantees a positive diagonal
  return d;
}

}  // namespace

DeviceJacobi::DeviceJacobi(const CsrMatrix& A) : inv_diag_(inverse_diagonal(A)) {}

void DeviceJacobi::apply(const double* r, double* z, cudaStream_t stream) {
  const auto n = int64_t(inv_diag_.size());
  if (n == 0) return;
  scale_kernel<<<blocks_for(n), kBlock, 0, stream>>>(inv_diag_.data(), r, z, n);
  PGSIM_CUDA_LAUNCH();
}

void DeviceIdentity::apply(const double* r, double* z, cudaStream_t stream) {
  if (n_) PGSIM_CUDA(cudaMemcpyAsync(z, r, size_t(n_) * sizeof(double), cudaMemcpyDeviceToDevice, stream));
}

}  // namespace pgsim::gpu
