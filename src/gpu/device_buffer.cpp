#include "gpu/device_buffer.hpp"

#include <cstdint>

namespace pgsim::gpu {
namespace {

cudaMemPool_t current_pool() {
  int device = 0;
  PGSIM_CUDA(cudaGetDevice(&device));
  cudaMemPool_t pool = nullptr;
  PGSIM_CUDA(cudaDeviceGetDefaultMemPool(&pool, device));
  return pool;
}

}  // namespace

StreamPoolKept::StreamPoolKept() {
  uint64_t threshold = UINT64_MAX;
  PGSIM_CUDA(cudaMemPoolSetAttribute(current_pool(), cudaMemPoolAttrReleaseThreshold, &threshold));
}

StreamPoolKept::~StreamPoolKept() {
  int device = 0;
  cudaMemPool_t pool = nullptr;
  if (cudaDeviceSynchronize() != cudaSuccess || cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetDefaultMemPool(&pool, device) != cudaSuccess)
    return;
  uint64_t threshold = 0;
  cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold);
  cudaMemPoolTrimTo(pool, 0);
}

}  // namespace pgsim::gpu
