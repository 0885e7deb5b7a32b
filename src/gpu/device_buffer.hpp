#pragma once
// Owning device arrays and a device CSR matrix. Plain cudaMalloc, no managed memory.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>
#include <vector>

#include "gpu/cuda_check.hpp"
#include "mna/csr.hpp"

namespace pgsim::gpu {

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t n) : n_(n) {
    if (n) PGSIM_CUDA(cudaMalloc(&p_, n * sizeof(T)));
  }
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }
  ~DeviceBuffer() {
    if (p_) cudaFree(p_);
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void upload(const std::vector<T>& host) {
    if (host.size()) PGSIM_CUDA(cudaMemcpy(p_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  std::vector<T> download() const {
    std::vector<T> host(n_);
    if (n_) PGSIM_CUDA(cudaMemcpy(host.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }
  T* data() { return p_; }
  const T* data() const { return p_; }
  size_t size() const { return n_; }

 private:
  T* p_ = nullptr;
  size_t n_ = 0;
};

// A CSR matrix on the device, uploaded once.
struct DeviceCsr {
  int32_t rows = 0;
  int64_t nnz = 0;
  DeviceBuffer<int32_t> ptr, col;
  DeviceBuffer<double> val;

  DeviceCsr() = default;
  explicit DeviceCsr(const CsrMatrix& A) : rows(A.rows), nnz(A.nnz()), ptr(A.ptr), col(A.col), val(A.val) {}
};

}  // namespace pgsim::gpu
