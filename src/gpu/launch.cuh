#pragma once
// Launch shapes and the reductions the kernels share (CUDA code only).
#include <cuda_runtime.h>

#include <cstdint>

namespace pgsim::gpu {

constexpr int kBlock = 256;          // threads per block of the streaming kernels
constexpr int kReduceBlocks = 1024;  // most blocks of a reduction: the grid-stride loops cover the rest

inline unsigned blocks_for(int64_t threads, int block = kBlock) {
  return static_cast<unsigned>((threads + block - 1) / block);
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
