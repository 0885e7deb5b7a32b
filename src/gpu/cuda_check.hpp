#pragma once
// Checked CUDA and cuSPARSE calls: a failure throws GpuError naming the call and the place.
#include <cuda_runtime_api.h>
#include <cusparse.h>

#include <stdexcept>
#include <string>

namespace pgsim::gpu {

class GpuError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line);
[[noreturn]] void throw_cusparse_error(cusparseStatus_t err, const char* call, const char* file, int line);

}  // namespace pgsim::gpu

#define PGSIM_CUDA(call)                                                                         \
  do {                                                                                           \
    cudaError_t pgsim_err_ = (call);                                                             \
    if (pgsim_err_ != cudaSuccess) ::pgsim::gpu::throw_cuda_error(pgsim_err_, #call, __FILE__, __LINE__); \
  } while (0)

#define PGSIM_CUSPARSE(call)                                                                     \
  do {                                                                                           \
    cusparseStatus_t pgsim_err_ = (call);                                                        \
    if (pgsim_err_ != CUSPARSE_STATUS_SUCCESS)                                                   \
      ::pgsim::gpu::throw_cusparse_error(pgsim_err_, #call, __FILE__, __LINE__);                 \
  } while (0)

// After a kernel launch: launch errors at once (asynchronous faults surface at the next sync).
#define PGSIM_CUDA_LAUNCH() PGSIM_CUDA(cudaGetLastError())
