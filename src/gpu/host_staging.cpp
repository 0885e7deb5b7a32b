#include "gpu/host_staging.hpp"

#include <algorithm>
#include <cstring>

#include "gpu/cuda_check.hpp"

namespace pgsim::gpu {
namespace {

// Below this many bytes one thread fills a buffer faster than a parallel region starts.
constexpr size_t kParallelBytes = size_t(1) << 20;
constexpr size_t kPiece = size_t(64) << 10;  // bytes per thread task

// dst[0, len) = src[0, len) on all threads (one, for a short copy).
void parallel_copy(char* dst, const char* src, size_t len) {
  const std::ptrdiff_t pieces = std::ptrdiff_t((len + kPiece - 1) / kPiece);
#pragma omp parallel for schedule(static) if (len >= kParallelBytes)
  for (std::ptrdiff_t p = 0; p < pieces; ++p) {
    const size_t at = size_t(p) * kPiece;
    std::memcpy(dst + at, src + at, std::min(kPiece, len - at));
  }
}

}  // namespace

HostStaging::HostStaging(size_t chunk_bytes) : chunk_(std::max<size_t>(chunk_bytes / 8 * 8, 8)) {
  PGSIM_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  for (int k = 0; k < 2; ++k) {
    PGSIM_CUDA(cudaMallocHost(&buffer_[k], chunk_));
    PGSIM_CUDA(cudaEventCreateWithFlags(&drained_[k], cudaEventDisableTiming));
  }
}

HostStaging::~HostStaging() {
  if (stream_) cudaStreamSynchronize(stream_);
  for (int k = 0; k < 2; ++k) {
    if (drained_[k]) cudaEventDestroy(drained_[k]);
    if (buffer_[k]) cudaFreeHost(buffer_[k]);
  }
  if (stream_) cudaStreamDestroy(stream_);
}

template <class Fill>
void HostStaging::staged(void* dst, size_t bytes, Fill fill) {
  for (size_t offset = 0; offset < bytes; offset += chunk_) {
    const size_t len = std::min(chunk_, bytes - offset);
    const int k = next_;
    next_ ^= 1;
    PGSIM_CUDA(cudaEventSynchronize(drained_[k]));  // the previous copy out of this buffer is done
    fill(static_cast<char*>(buffer_[k]), offset, len);
    PGSIM_CUDA(cudaMemcpyAsync(static_cast<char*>(dst) + offset, buffer_[k], len, cudaMemcpyHostToDevice, stream_));
    PGSIM_CUDA(cudaEventRecord(drained_[k], stream_));
  }
}

void HostStaging::copy(void* dst, const void* src, size_t bytes) {
  const char* s = static_cast<const char*>(src);
  staged(dst, bytes, [s](char* buffer, size_t offset, size_t len) { parallel_copy(buffer, s + offset, len); });
}

void HostStaging::download(void* dst, const void* src, size_t bytes) {
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  const size_t chunks = (bytes + chunk_ - 1) / chunk_;
  const auto length = [&](size_t i) { return std::min(chunk_, bytes - i * chunk_); };
  // Chunk i lands in buffer i % 2; drained_[i % 2] is recorded after it. Buffer (i + 1) % 2 is
  // free to take chunk i + 1 once chunk i - 1 was copied out of it, which the loop did before.
  const auto queue = [&](size_t i) {
    PGSIM_CUDA(cudaMemcpyAsync(buffer_[i % 2], s + i * chunk_, length(i), cudaMemcpyDeviceToHost, stream_));
    PGSIM_CUDA(cudaEventRecord(drained_[i % 2], stream_));
  };
  if (chunks > 0) queue(0);
  for (size_t i = 0; i < chunks; ++i) {
    PGSIM_CUDA(cudaEventSynchronize(drained_[i % 2]));
    if (i + 1 < chunks) queue(i + 1);
    parallel_copy(d + i * chunk_, static_cast<const char*>(buffer_[i % 2]), length(i));
  }
}

void HostStaging::copy_as_float(float* dst, const double* src, size_t n) {
  staged(dst, n * sizeof(float), [src](char* buffer, size_t offset, size_t len) {
    float* out = reinterpret_cast<float*>(buffer);
    const double* in = src + offset / sizeof(float);
    const std::ptrdiff_t count = std::ptrdiff_t(len / sizeof(float));
#pragma omp parallel for schedule(static) if (len >= kParallelBytes)
    for (std::ptrdiff_t i = 0; i < count; ++i) out[i] = static_cast<float>(in[i]);
  });
}

void HostStaging::finish() { PGSIM_CUDA(cudaStreamSynchronize(stream_)); }

DeviceCsr staged_copy(const CsrMatrix& A) {
  DeviceCsr d;
  d.rows = A.rows;
  d.nnz = A.nnz();
  d.ptr = DeviceBuffer<int32_t>(A.ptr.size());
  d.col = DeviceBuffer<int32_t>(A.col.size());
  d.val = DeviceBuffer<double>(A.val.size());
  HostStaging staging;
  staging.upload(d.ptr.data(), A.ptr);
  staging.upload(d.col.data(), A.col);
  staging.upload(d.val.data(), A.val);
  staging.finish();
  return d;
}

}  // namespace pgsim::gpu
