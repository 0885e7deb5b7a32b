#pragma once
// Host-to-device copies (and device-to-host downloads) through two reused pinned buffers. A copy
// from pageable memory runs at the speed of the driver's own staging, on one thread; here all
// OpenMP threads fill one pinned buffer (converting on the way where asked) while the DMA engine
// drains the other, and the pinned memory is allocated once for a whole upload instead of pinned
// per copy.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpu/device_buffer.hpp"
#include "mna/csr.hpp"

namespace pgsim::gpu {

class HostStaging {
 public:
  explicit HostStaging(size_t chunk_bytes = size_t(8) << 20);
  ~HostStaging();
  HostStaging(const HostStaging&) = delete;
  HostStaging& operator=(const HostStaging&) = delete;

  // Queues dst[0, n) = src[0, n) on stream(); src may be reused at return, dst must live until finish().
  void copy(void* dst, const void* src, size_t bytes);
  void copy_as_float(float* dst, const double* src, size_t n);

  // From a std::vector or a FillVector (a CsrMatrix's arrays).
  template <class Allocator>
  void upload(int32_t* dst, const std::vector<int32_t, Allocator>& v) {
    copy(dst, v.data(), v.size() * sizeof(int32_t));
  }
  template <class Allocator>
  void upload(double* dst, const std::vector<double, Allocator>& v) {
    copy(dst, v.data(), v.size() * sizeof(double));
  }
  template <class Allocator>
  void upload(float* dst, const std::vector<double, Allocator>& v) {
    copy_as_float(dst, v.data(), v.size());
  }

  // The other way: host dst[0, bytes) = device src[0, bytes), returning when all of it is there.
  // Each chunk lands in one pinned buffer while all OpenMP threads copy the one before out of the
  // other, so the destination's fresh pages are faulted in on all cores (a pageable cudaMemcpy
  // copies through the driver's staging on one thread, which also faults them in).
  void download(void* dst, const void* src, size_t bytes);

  // Waits for every queued copy (and any other work queued on stream()).
  void finish();
  cudaStream_t stream() const { return stream_; }

 private:
  // Fills a pinned buffer with bytes [offset, offset + len) of the destination: fill(buffer, offset, len).
  template <class Fill>
  void staged(void* dst, size_t bytes, Fill fill);

  size_t chunk_;
  void* buffer_[2] = {nullptr, nullptr};
  cudaEvent_t drained_[2] = {nullptr, nullptr};  // recorded after the copy out of each buffer
  int next_ = 0;
  cudaStream_t stream_ = nullptr;
};

// A's copy on the device through a HostStaging: a large matrix (a rank's block of 10M rows, 0.6
// GB) comes up faster than through DeviceCsr(A)'s pageable copies.
DeviceCsr staged_copy(const CsrMatrix& A);

}  // namespace pgsim::gpu
