#include "gpu/cuda_check.hpp"

#include "gpu/cusparse_library.hpp"

namespace pgsim::gpu {

void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line) {
  throw GpuError(std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " +
                 cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
}

void throw_cusparse_error(cusparseStatus_t err, const char* call, const char* file, int line) {
  throw GpuError(std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " +
                 cusparse().GetErrorString(err));
}

}  // namespace pgsim::gpu
