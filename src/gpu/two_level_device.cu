#include "gpu/two_level_device.hpp"

#include <stdexcept>

#include "gpu/launch.cuh"

namespace pgsim::gpu {
namespace {

// y = A x for a dense row-major n x n A: one warp per row.
__global__ void dense_gemv(int32_t n, const double* __restrict__ A, const double* __restrict__ x,
                           double* __restrict__ y) {
  const int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int32_t i = int32_t(t / 32);
  const int lane = int(t % 32);
  double s = 0;
  if (i < n)
    for (int32_t j = lane; j < n; j += 32) s += A[int64_t(i) * n + j] * x[j];
  s = group_sum<32>(s);
  if (lane == 0 && i < n) y[i] = s;
}

// u = r - u
__global__ void subtract_from(int32_t n, const double* __restrict__ r, double* __restrict__ u) {
  const int32_t i = int32_t(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) u[i] = r[i] - u[i];
}

// z += Z (y1 - y2)
__global__ void add_coarse(int32_t n, const int32_t* __restrict__ unknown_of_row, const double* __restrict__ y1,
                           const double* __restrict__ y2, double* __restrict__ z) {
  const int32_t i = int32_t(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  const int32_t c = unknown_of_row[i];
  if (c >= 0) z[i] += y1[c] - y2[c];
}

}  // namespace

DeviceTwoLevel::DeviceTwoLevel(std::unique_ptr<DevicePreconditioner> local, const CoarseCorrectionData& data,
                               DeviceScalarSum& across_ranks)
    : local_(std::move(local)),
      across_ranks_(across_ranks),
      rows_(int32_t(data.unknown_of_row.size())),
      unknowns_(data.unknowns),
      zt_(make_device_spmv(SpmvLayout::csr, data.zt)),
      gz_(make_device_spmv(SpmvLayout::csr, data.gz)),
      gzt_(make_device_spmv(SpmvLayout::csr, data.gzt)),
      unknown_of_row_(data.unknown_of_row),
      e_inverse_(data.e_inverse),
      c_(size_t(data.unknowns)),
      y1_(size_t(data.unknowns)),
      y2_(size_t(data.unknowns)),
      u_(data.unknown_of_row.size()) {
  if (unknowns_ <= 0 || data.e_inverse.size() != size_t(unknowns_) * size_t(unknowns_))
    throw std::invalid_argument("DeviceTwoLevel: no coarse unknowns, or an inverse of the wrong size");
}

void DeviceTwoLevel::apply(const double* r, double* z, cudaStream_t stream) {
  zt_->multiply(r, c_.data(), stream);
  across_ranks_.sum(c_.data(), unknowns_, stream);
  dense_gemv<<<blocks_for(int64_t(unknowns_) * 32), kBlock, 0, stream>>>(unknowns_, e_inverse_.data(), c_.data(),
                                                                        y1_.data());
  PGSIM_CUDA_LAUNCH();
  gz_->multiply(y1_.data(), u_.data(), stream);
  subtract_from<<<blocks_for(rows_), kBlock, 0, stream>>>(rows_, r, u_.data());
  PGSIM_CUDA_LAUNCH();
  local_->apply(u_.data(), z, stream);
  gzt_->multiply(z, c_.data(), stream);
  across_ranks_.sum(c_.data(), unknowns_, stream);
  dense_gemv<<<blocks_for(int64_t(unknowns_) * 32), kBlock, 0, stream>>>(unknowns_, e_inverse_.data(), c_.data(),
                                                                        y2_.data());
  PGSIM_CUDA_LAUNCH();
  add_coarse<<<blocks_for(rows_), kBlock, 0, stream>>>(rows_, unknown_of_row_.data(), y1_.data(), y2_.data(), z);
  PGSIM_CUDA_LAUNCH();
}

}  // namespace pgsim::gpu
