#pragma once
// Kernels over the rows of a device CSR matrix where a few rows are far longer than the rest (the
// ground vertex's at level 0 of a CMG hierarchy): one thread per row, and a block for each long
// row, whose primitives below give the same result (the same bits for a sum) as one thread's
// walk. Shared by the hierarchy's kernels on the device (cmg_coarsen.cu, cmg_build.cu); CUDA code
// only. Everything runs on the default stream, as those callers do.
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/cuda_check.hpp"
#include "gpu/device_algorithms.cuh"
#include "gpu/device_buffer.hpp"
#include "gpu/launch.cuh"

namespace pgsim::gpu {
// Internal to each .cu file that includes it (kernels are not shared between files' modules).
namespace {

constexpr cudaStream_t kStream = nullptr;  // the default stream, as launch.cuh's launch()

__device__ inline int64_t thread_index() { return int64_t(blockIdx.x) * blockDim.x + threadIdx.x; }

// Rows longer than this are walked by a block each, the others by a thread each.
constexpr int32_t kLongRow = 512;
// Entries of a long row staged in shared memory at a time.
constexpr int kTile = 512;

// A kernel that walks rows comes in two launches: one thread per item (a vertex, a cluster's
// member, a row), skipping items whose rows are longer than kLongRow; then one block per such
// item, listed in long_items. Grids have a few long rows (the ground vertex's: ~150k entries at
// level 0 of a 5M-unknown grid): one thread walking one waited a memory latency per entry (0.1 s
// in all, where the rest of the coarsening takes milliseconds). The row primitives below take
// kLong: false, the calling thread does all; true, the whole block does (every thread of it must
// call them) and thread 0 gets the result, the other threads' being to be dropped.
template <bool kLong>
__device__ inline int64_t item_index(const int32_t* long_items) {
  return kLong ? long_items[blockIdx.x] : thread_index();
}

// Whether this thread writes its item's results: all in the per-thread launch, thread 0 in the per-block one.
template <bool kLong>
__device__ inline bool writes() {
  return !kLong || threadIdx.x == 0;
}

// init + value(begin) + value(begin + 1) + ... + value(end - 1), added in that order, the host's
// (so the same bits); a long row's values staged in shared memory a tile at a time by the block
// for thread 0 to add. Every sum of a row here is of this form: where the host skips an entry,
// value() is +0.0, which leaves any sum that is not -0.0 as it is, and these never are (+0.0
// plus same-signed terms).
template <bool kLong, class Value>
__device__ double ordered_sum(int32_t begin, int32_t end, double init, Value value) {
  double sum = init;
  if constexpr (!kLong) {
    for (int32_t k = begin; k < end; ++k) sum += value(k);
  } else {
    __shared__ double tile[kTile];
    for (int32_t base = begin; base < end; base += kTile) {
      const int32_t m = min(kTile, end - base);
      for (int32_t i = threadIdx.x; i < m; i += blockDim.x) tile[i] = value(base + i);
      __syncthreads();
      if (threadIdx.x == 0) {
#pragma unroll 8
        for (int32_t i = 0; i < m; ++i) sum += tile[i];
      }
      __syncthreads();
    }
  }
  return sum;
}

// How many k in [begin, end) satisfy pred(k).
template <bool kLong, class Pred>
__device__ int32_t count_if(int32_t begin, int32_t end, Pred pred) {
  int32_t count = 0;
  const int32_t first = kLong ? begin + int32_t(threadIdx.x) : begin, step = kLong ? int32_t(blockDim.x) : 1;
  for (int32_t k = first; k < end; k += step) count += pred(k) ? 1 : 0;
  if constexpr (kLong) {
    using Reduce = cub::BlockReduce<int32_t, kBlock>;
    __shared__ typename Reduce::TempStorage storage;
    count = Reduce(storage).Sum(count);
  }
  return count;
}

// write(k, out + i) for the i-th k in [begin, end) with keep(k), in order; returns out plus their
// number (to every thread of a block).
template <bool kLong, class Keep, class Write>
__device__ int32_t ordered_writes(int32_t begin, int32_t end, int32_t out, Keep keep, Write write) {
  if constexpr (!kLong) {
    for (int32_t k = begin; k < end; ++k)
      if (keep(k)) write(k, out++);
  } else {
    using Scan = cub::BlockScan<int32_t, kBlock>;
    __shared__ typename Scan::TempStorage storage;
    for (int32_t base = begin; base < end; base += kBlock) {
      const int32_t k = base + int32_t(threadIdx.x);
      const int32_t kept = k < end && keep(k) ? 1 : 0;
      int32_t before = 0, total = 0;
      Scan(storage).ExclusiveSum(kept, before, total);
      if (kept) write(k, out + before);
      out += total;
      __syncthreads();  // storage is reused
    }
  }
  return out;
}

// The first of col[begin, end) (ascending) not below value.
__device__ inline int32_t lower_bound(const int32_t* col, int32_t begin, int32_t end, int32_t value) {
  while (begin < end) {
    const int32_t mid = begin + (end - begin) / 2;
    if (col[mid] < value)
      begin = mid + 1;
    else
      end = mid;
  }
  return begin;
}

__device__ inline bool is_long(const int32_t* ptr, int32_t r) { return ptr[r + 1] - ptr[r] > kLongRow; }

// Items i in [0, n) whose rows (row map[i], or row i without a map) have more than kLongRow entries.
__global__ void long_items_kernel(int32_t n, const int32_t* ptr, const int32_t* map, int32_t* items, int32_t* count) {
  const int64_t i = thread_index();
  if (i >= n) return;
  if (is_long(ptr, map ? map[i] : int32_t(i))) items[atomicAdd(count, 1)] = int32_t(i);
}

struct LongItems {
  DeviceBuffer<int32_t> items;
  int32_t count = 0;
};

LongItems long_items(int32_t n, const int32_t* ptr, const int32_t* map = nullptr) {
  LongItems l;
  l.items = DeviceBuffer<int32_t>(size_t(n) + 1, kStream);  // the last: the count
  PGSIM_CUDA(cudaMemsetAsync(l.items.data() + n, 0, sizeof(int32_t), kStream));
  launch(long_items_kernel, n, n, ptr, map, l.items.data(), l.items.data() + n);
  l.count = read_back(l.items.data() + n);
  return l;
}

// A kernel pair (per thread, per block) over n items, the long ones those of `longs`; the kernels
// take the long items' list first.
template <class... Params, class... Args>
void launch_rows(void (*per_thread)(const int32_t*, Params...), void (*per_block)(const int32_t*, Params...), int64_t n,
                 const LongItems& longs, Args... args) {
  launch(per_thread, n, longs.items.data(), args...);
  if (longs.count == 0) return;
  per_block<<<unsigned(longs.count), kBlock, 0, kStream>>>(longs.items.data(), args...);
  PGSIM_CUDA_LAUNCH();
}

__global__ void iota_kernel(int32_t n, int32_t* out) {
  const int64_t i = thread_index();
  if (i < n) out[i] = int32_t(i);
}

// Bits that hold every value below `values`.
inline int bits_for(int32_t values) {
  int bits = 1;
  while ((int64_t(1) << bits) < values) ++bits;
  return bits;
}

}  // namespace
}  // namespace pgsim::gpu
