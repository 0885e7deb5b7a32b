#pragma once
// The one place where the GPU back end's internal failures become the GpuFailure that the
// application catches (gpu_solver.hpp): a failed CUDA, cuSPARSE or NCCL call (GpuError,
// cuda_check.hpp) and an argument a device structure refuses (std::invalid_argument: a bad SpMV
// layout or triangular-solve method name, a matrix of the wrong shape). Every entry point of the
// back end runs its body through as_gpu_failure(), so no other exception type leaks from a
// device failure and `--backend auto` can fall back to the CPU on exactly these.
#include <stdexcept>
#include <utility>

#include "gpu/cuda_check.hpp"
#include "gpu/gpu_solver.hpp"

namespace pgsim::gpu {

// f(), with a GpuError or std::invalid_argument it throws rethrown as a GpuFailure (same message).
template <class F>
auto as_gpu_failure(F&& f) -> decltype(std::forward<F>(f)()) {
  try {
    return std::forward<F>(f)();
  } catch (const GpuError& e) {
    throw GpuFailure(e.what());
  } catch (const std::invalid_argument& e) {
    throw GpuFailure(e.what());
  }
}

}  // namespace pgsim::gpu
