#include "gpu/launch.cuh"
#include "gpu/transient_kernels.hpp"
#include "tran/companion.hpp"

namespace pgsim::gpu {
namespace {

__global__ void step_start_kernel(const double* __restrict__ b0, const int32_t* __restrict__ term_ptr,
                                  const int32_t* __restrict__ terms, const double* __restrict__ values, int32_t n,
                                  double* __restrict__ b, double* __restrict__ x, double* __restrict__ x_previous) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const double xi = x[i];
    x[i] = 2.0 * xi - x_previous[i];
    x_previous[i] = xi;
    double s = b0[i];
    for (int32_t k = term_ptr[i]; k < term_ptr[i + 1]; ++k) {
      const int32_t t = terms[k];
      const double v = values[t >> 1];
      s = (t & 1) ? s + v : s - v;
    }
    b[i] = s;
  }
}

__global__ void advance_branches_kernel(DeviceBranches br, bool trapezoidal, const double* __restrict__ x) {
  for (int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < br.count; k += int64_t(gridDim.x) * blockDim.x) {
    const double v = branch_voltage(br.plus[k], br.minus[k], br.offset[k], x);
    const double i = br.g[k] * v + br.history[k];
    br.current[k] = i;
    br.history[k] = companion_history(br.inductor[k] != 0, trapezoidal, br.g[k], v, i);
  }
}

__global__ void track_kernel(const double* __restrict__ x, int32_t n, double* __restrict__ lo, double* __restrict__ hi,
                             const int32_t* __restrict__ probe_unknown, const double* __restrict__ probe_offset,
                             int32_t np, double* __restrict__ probed) {
  const int64_t first = int64_t(blockIdx.x) * blockDim.x + threadIdx.x, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = first; i < n; i += stride) {
    lo[i] = fmin(lo[i], x[i]);
    hi[i] = fmax(hi[i], x[i]);
  }
  for (int64_t p = first; p < np; p += stride) {
    const int32_t u = probe_unknown[p];
    probed[p] = probe_offset[p] + (u >= 0 ? x[u] : 0.0);
  }
}

}  // namespace

void launch_step_start(const double* b0, const int32_t* term_ptr, const int32_t* terms, const double* values,
                       int32_t n, double* b, double* x, double* x_previous, cudaStream_t stream) {
  if (n == 0) return;
  step_start_kernel<<<blocks_for(n), kBlock, 0, stream>>>(b0, term_ptr, terms, values, n, b, x, x_previous);
  PGSIM_CUDA_LAUNCH();
}

void launch_advance_branches(const DeviceBranches& branches, bool trapezoidal, const double* x, cudaStream_t stream) {
  if (branches.count == 0) return;
  advance_branches_kernel<<<blocks_for(branches.count), kBlock, 0, stream>>>(branches, trapezoidal, x);
  PGSIM_CUDA_LAUNCH();
}

void launch_track(const double* x, int32_t n, double* lo, double* hi, const int32_t* probe_unknown,
                  const double* probe_offset, int32_t np, double* probed, cudaStream_t stream) {
  const int32_t threads = n > np ? n : np;
  if (threads == 0) return;
  track_kernel<<<blocks_for(threads), kBlock, 0, stream>>>(x, n, lo, hi, probe_unknown, probe_offset, np, probed);
  PGSIM_CUDA_LAUNCH();
}

}  // namespace pgsim::gpu
