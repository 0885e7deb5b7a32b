#pragma once
// Owning device arrays and a device CSR matrix. Plain cudaMalloc, no managed memory.
#include <cuda_runtime_api.h>

#include <atomic>
#include <cstddef>
#include <utility>
#include <vector>

#include "gpu/cuda_check.hpp"
#include "mna/csr.hpp"

namespace pgsim::gpu {

// Bytes held by DeviceBuffers now and at most so far (cuSPARSE's own workspaces excluded):
// the report's peak_device_bytes.
inline std::atomic<size_t>& device_bytes_in_use() {
  static std::atomic<size_t> bytes{0};
  return bytes;
}
inline std::atomic<size_t>& peak_device_bytes() {
  static std::atomic<size_t> bytes{0};
  return bytes;
}

// `bytes` more in use, the peak raised to match.
inline void count_device_bytes(size_t bytes) {
  size_t now = device_bytes_in_use() += bytes;
  size_t peak = peak_device_bytes().load();
  while (now > peak && !peak_device_bytes().compare_exchange_weak(peak, now)) {
  }
}

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t n) : n_(n) {
    if (n) PGSIM_CUDA(cudaMalloc(reinterpret_cast<void**>(&p_), n * sizeof(T)));
    count_device_bytes(n * sizeof(T));
  }
  // Memory for work queued on `stream` only (scratch of a step's kernels): taken and given back
  // in that stream's order (cudaMallocAsync, cudaFreeAsync) from the device's default pool, which
  // keeps what is given back for the next one (StreamPoolKept). A cudaFree waits for the whole
  // device and unmaps: a chain of steps that each free their scratch (a CMG level's coarsening,
  // about 40 arrays) waited that often, and the host could queue nothing ahead. Counted in
  // device_bytes_in_use while held; what the pool keeps is not.
  DeviceBuffer(size_t n, cudaStream_t stream) : n_(n), stream_(stream), stream_ordered_(true) {
    if (n) PGSIM_CUDA(cudaMallocAsync(reinterpret_cast<void**>(&p_), n * sizeof(T), stream));
    count_device_bytes(n * sizeof(T));
  }
  // From a std::vector or a FillVector (a CsrMatrix's arrays).
  template <class Allocator>
  explicit DeviceBuffer(const std::vector<T, Allocator>& host) : DeviceBuffer(host.size()) {
    upload(host.data(), host.size());
  }
  ~DeviceBuffer() {
    if (p_) {
      if (stream_ordered_) cudaFreeAsync(p_, stream_);
      else cudaFree(p_);
      device_bytes_in_use() -= n_ * sizeof(T);
    }
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)), stream_(o.stream_), stream_ordered_(o.stream_ordered_) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    std::swap(stream_, o.stream_);
    std::swap(stream_ordered_, o.stream_ordered_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  template <class Allocator>
  void upload(const std::vector<T, Allocator>& host) {
    upload(host.data(), host.size());
  }
  void upload(const T* host, size_t n) {
    if (n) PGSIM_CUDA(cudaMemcpy(p_, host, n * sizeof(T), cudaMemcpyHostToDevice));
  }
  std::vector<T> download() const {
    std::vector<T> host(n_);
    download(host.data());
    return host;
  }
  // Into host[0, size()): memory the caller has touched already copies without page faults.
  void download(T* host) const {
    if (n_) PGSIM_CUDA(cudaMemcpy(host, p_, n_ * sizeof(T), cudaMemcpyDeviceToHost));
  }
  T* data() { return p_; }
  const T* data() const { return p_; }
  size_t size() const { return n_; }

 private:
  T* p_ = nullptr;
  size_t n_ = 0;
  cudaStream_t stream_ = nullptr;  // stream_ordered_: the stream it was taken on
  bool stream_ordered_ = false;
};

// While one lives, the current device's default pool keeps what stream-ordered DeviceBuffers give back (its
// release threshold at the maximum) for the next ones: a chain of steps maps its scratch once.
// At its end the device is synchronized and the pool's memory returned to it. Throws GpuError on a
// CUDA failure when made; its end ignores them (the next CUDA call reports a sticky one).
class StreamPoolKept {
 public:
  StreamPoolKept();
  ~StreamPoolKept();
  StreamPoolKept(const StreamPoolKept&) = delete;
  StreamPoolKept& operator=(const StreamPoolKept&) = delete;
};

// A CSR matrix in device memory, not owned (columns sorted in every row, as CsrMatrix).
struct DeviceCsrView {
  int32_t rows = 0;
  const int32_t* ptr = nullptr;  // rows + 1
  const int32_t* col = nullptr;  // ptr[rows]
  const double* val = nullptr;
};

// A CSR matrix on the device, uploaded once.
struct DeviceCsr {
  int32_t rows = 0;
  int64_t nnz = 0;
  DeviceBuffer<int32_t> ptr, col;
  DeviceBuffer<double> val;

  DeviceCsr() = default;
  explicit DeviceCsr(const CsrMatrix& A) : rows(A.rows), nnz(A.nnz()), ptr(A.ptr), col(A.col), val(A.val) {}
  DeviceCsrView view() const { return {rows, ptr.data(), col.data(), val.data()}; }
};

}  // namespace pgsim::gpu
