#pragma once
// Launch shapes and the reductions the kernels share (CUDA code only).
#include <cuda_runtime.h>

#include <cstdint>
#include <utility>

#include "gpu/cuda_check.hpp"

namespace pgsim::gpu {

constexpr int kBlock = 256;          // threads per block of the streaming kernels
constexpr int kReduceBlocks = 1024;  // most blocks of a reduction: the grid-stride loops cover the rest

inline unsigned blocks_for(int64_t threads, int block = kBlock) {
  return static_cast<unsigned>((threads + block - 1) / block);
}

// kernel<<<blocks_for(threads), kBlock>>>(args...) on the default stream, one thread per item, the
// launch checked; nothing where there are no threads.
template <class Kernel, class... Args>
void launch(Kernel kernel, int64_t threads, Args... args) {
  if (threads <= 0) return;
  kernel<<<blocks_for(threads), kBlock>>>(args...);
  PGSIM_CUDA_LAUNCH();
}
// Programmatic dependent launch (sm_90): a kernel launched by launch_after() may be scheduled
// while the kernel before it in the stream is still running, once every block of that one has
// called allow_dependents(); so the launch of a chain of small dependent kernels overlaps their
// work. Such a kernel must call wait_for_prior_grids() before it touches memory: it returns when
// the kernel before has finished and its writes are visible. Both are no-ops without the launch
// attribute, so a kernel may call them however it is launched.
__device__ inline void wait_for_prior_grids() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ inline void allow_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// The first statement of a kernel in such a chain: the next kernel may be scheduled, this one
// waits for the one before.
__device__ inline void chained_kernel_start() {
  allow_dependents();
  wait_for_prior_grids();
}

// kernel<<<grid, block, 0, stream>>>(args...), as a programmatic dependent launch when
// `dependent` (the kernel must start with chained_kernel_start() or wait_for_prior_grids()).
template <class... Params, class... Args>
void launch_after(bool dependent, void (*kernel)(Params...), unsigned grid, unsigned block, cudaStream_t stream,
                  Args&&... args) {
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(grid);
  config.blockDim = dim3(block);
  config.stream = stream;
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  config.attrs = &attribute;
  config.numAttrs = dependent ? 1 : 0;
  PGSIM_CUDA(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...));
}

// Loads the kernels into the current context now. CUDA loads a kernel on its first launch by
// default (lazy loading), which puts the load inside the first solve; a warm-up thread calls this
// instead while the host parses. Errors are left for the first launch to report.
template <class... Kernels>
void load_kernels(Kernels... kernels) {
  cudaFuncAttributes attributes;
  ((cudaFuncGetAttributes(&attributes, kernels) != cudaSuccess ? (void)cudaGetLastError() : (void)0), ...);
}

inline unsigned reduce_blocks(int64_t n) {
  unsigned b = blocks_for(n);
  return b == 0 ? 1u : (b < kReduceBlocks ? b : kReduceBlocks);
}

// Sum over the W lanes of a lane group (W a power of two <= 32); lane 0 of the group gets it.
// Every lane of the warp must call it.
template <int W>
__device__ inline double group_sum(double v) {
#pragma unroll
  for (int off = W / 2; off > 0; off /= 2) v += __shfl_down_sync(0xffffffffu, v, off, W);
  return v;
}

// Sum over the block; thread 0 gets it. blockDim.x must be a multiple of 32, at most 1024.
__device__ inline double block_sum(double v) {
  __shared__ double warp_sums[32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = group_sum<32>(v);
  __syncthreads();  // warp_sums may still be read by a previous call
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  v = threadIdx.x < blockDim.x / 32 ? warp_sums[threadIdx.x] : 0.0;
  if (warp == 0) v = group_sum<32>(v);
  return v;
}

// Device-side state of a grid-wide sum that finishes in one launch: every block stores its
// partial sum, the last block to finish adds them in block order, so the result does not depend
// on scheduling (deterministic, unlike atomicAdd on doubles).
struct GridSum {
  double* partials;    // kReduceBlocks
  unsigned* finished;  // 1 counter, 0 between launches (the last block resets it)
};

// Call with the thread's share; returns true in thread 0 of the last block, with `total` set.
__device__ inline bool grid_sum(GridSum g, double v, double& total) {
  __shared__ bool last;
  v = block_sum(v);
  if (threadIdx.x == 0) {
    g.partials[blockIdx.x] = v;
    __threadfence();
    last = atomicAdd(g.finished, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return false;
  double s = 0;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x) s += __ldcg(&g.partials[b]);
  s = block_sum(s);
  if (threadIdx.x == 0) {
    total = s;
    *g.finished = 0;
  }
  return threadIdx.x == 0;
}

}  // namespace pgsim::gpu
