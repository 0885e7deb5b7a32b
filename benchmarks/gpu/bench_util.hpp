#pragma once
// Timing helpers for the GPU benchmarks: CUDA events, warm-up, median of repeats.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <vector>

#include "gpu/cuda_check.hpp"

namespace pgsim::bench {

// Median milliseconds of `reps` timed calls of f(stream) after `warm` untimed ones.
template <class F>
double median_ms(cudaStream_t stream, int warm, int reps, F f) {
  for (int i = 0; i < warm; ++i) f(stream);
  cudaEvent_t start, stop;
  PGSIM_CUDA(cudaEventCreate(&start));
  PGSIM_CUDA(cudaEventCreate(&stop));
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    PGSIM_CUDA(cudaEventRecord(start, stream));
    f(stream);
    PGSIM_CUDA(cudaEventRecord(stop, stream));
    PGSIM_CUDA(cudaEventSynchronize(stop));
    float t = 0;
    PGSIM_CUDA(cudaEventElapsedTime(&t, start, stop));
    ms.push_back(t);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  return ms[ms.size() / 2];
}

}  // namespace pgsim::bench
