#pragma once
// CUB's device-wide algorithms as the back end calls them: scratch allocated per call in the
// stream's order (DeviceBuffer), on a stream, failures thrown (cuda_check.hpp). CUDA code only.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include <cstdint>

#include "gpu/cuda_check.hpp"
#include "gpu/device_buffer.hpp"

namespace pgsim::gpu {

// out[i] = in[0] + ... + in[i - 1] (out[0] = 0), n values.
template <class In, class Out>
void exclusive_sum(const In* in, Out* out, int64_t n, cudaStream_t stream) {
  size_t bytes = 0;
  PGSIM_CUDA(cub::DeviceScan::ExclusiveSum(nullptr, bytes, in, out, n, stream));
  DeviceBuffer<char> scratch(bytes, stream);
  PGSIM_CUDA(cub::DeviceScan::ExclusiveSum(scratch.data(), bytes, in, out, n, stream));
}

// (keys_out, values_out) = (keys_in, values_in) sorted by the key's bits [0, key_bits), stably:
// equal keys keep their input order (CUB's radix sort is stable).
template <class Key, class Value>
void stable_sort_pairs(const Key* keys_in, Key* keys_out, const Value* values_in, Value* values_out, int64_t n,
                       int key_bits, cudaStream_t stream) {
  size_t bytes = 0;
  PGSIM_CUDA(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys_in, keys_out, values_in, values_out, n, 0, key_bits,
                                             stream));
  DeviceBuffer<char> scratch(bytes, stream);
  PGSIM_CUDA(cub::DeviceRadixSort::SortPairs(scratch.data(), bytes, keys_in, keys_out, values_in, values_out, n, 0,
                                             key_bits, stream));
}

// Within each segment s of n items (items [offsets[s], offsets[s + 1]), segments of them), the
// pairs sorted by key, stably (CUB's segmented sort: a warp or a block per segment, by its length).
template <class Key, class Value>
void stable_sort_segments(const Key* keys_in, Key* keys_out, const Value* values_in, Value* values_out, int64_t n,
                          int64_t segments, const int32_t* offsets, cudaStream_t stream) {
  size_t bytes = 0;
  PGSIM_CUDA(cub::DeviceSegmentedSort::StableSortPairs(nullptr, bytes, keys_in, keys_out, values_in, values_out, n, segments,
                                                       offsets, offsets + 1, stream));
  DeviceBuffer<char> scratch(bytes, stream);
  PGSIM_CUDA(cub::DeviceSegmentedSort::StableSortPairs(scratch.data(), bytes, keys_in, keys_out, values_in, values_out, n,
                                                       segments, offsets, offsets + 1, stream));
}

// One value from device memory (a synchronous copy: the stream's work before it is done).
template <class T>
T read_back(const T* device_value) {
  T v;
  PGSIM_CUDA(cudaMemcpy(&v, device_value, sizeof(T), cudaMemcpyDeviceToHost));
  return v;
}

}  // namespace pgsim::gpu
