#include "gpu/pcg_gpu.hpp"

#include <cmath>

#include "gpu/cuda_check.hpp"
#include "gpu/launch.cuh"

namespace pgsim::gpu {

namespace {

// The PCG scalars in device memory: an array of doubles, these are the indices.
namespace scalar {
enum : int { pq, rz, rz_old, rr, bb, rr_stop, done, iteration, rr_local, count };  // rr, bb adjacent: read back together
}

// After an update: rr = total, and the verdict recorded for the host (iteration k's ||r||^2 and
// whether it converged).
__device__ void record_verdict(double* scal, double total, double* history) {
  using namespace scalar;
  const bool converged = total <= scal[rr_stop];
  const auto k = static_cast<int64_t>(scal[iteration]);
  scal[rr] = total;
  scal[done] = converged ? 1.0 : 0.0;
  scal[iteration] = double(k + 1);
  history[2 * k] = total;
  history[2 * k + 1] = converged ? 1.0 : 0.0;
}

__global__ void dot_kernel(const double* __restrict__ a, const double* __restrict__ b, int64_t n, GridSum g,
                           double* out) {
  double s = 0;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    s += a[i] * b[i];
  double total;
  if (grid_sum(g, s, total)) *out = total;
}

// alpha = rz / pq; x += alpha p; r -= alpha q; rr = r.r (one pass over the four vectors).
// Nothing once converged; else the last block records rr and the verdict for the host, or with
// `decide` false (distributed: rr is this rank's part) leaves it in rr_local for verdict_kernel.
__global__ void update_xr(double* __restrict__ x, double* __restrict__ r, const double* __restrict__ p,
                          const double* __restrict__ q, int64_t n, double* scal, GridSum g, double* history,
                          bool decide) {
  using namespace scalar;
  if (scal[done] != 0.0) return;  // the same value in every block: set by an earlier launch
  const double alpha = scal[rz] / scal[pq];
  double s = 0;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    x[i] += alpha * p[i];
    const double ri = r[i] - alpha * q[i];
    r[i] = ri;
    s += ri * ri;
  }
  double total;
  if (grid_sum(g, s, total)) {
    if (decide) record_verdict(scal, total, history);
    else scal[rr_local] = total;
  }
}

// The verdict on rr_local once it holds the sum over the ranks (nothing once converged, as update_xr).
__global__ void verdict_kernel(double* scal, double* history) {
  using namespace scalar;
  if (scal[done] == 0.0) record_verdict(scal, scal[rr_local], history);
}

// Start of a solve or a restart: iteration counter, convergence threshold (tolerance^2 ||b||^2,
// ||b||^2 from the device), flag.
__global__ void reset_kernel(double* scal, double tolerance_sq, double first_iteration) {
  using namespace scalar;
  scal[rr_stop] = tolerance_sq * scal[bb];
  scal[done] = 0.0;
  scal[iteration] = first_iteration;
}

// rz_old = rz; rz = r.z
__global__ void rz_kernel(const double* __restrict__ r, const double* __restrict__ z, int64_t n, double* scal,
                          GridSum g, int rz, int rz_old) {
  double s = 0;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    s += r[i] * z[i];
  double total;
  if (grid_sum(g, s, total)) {
    scal[rz_old] = scal[rz];
    scal[rz] = total;
  }
}

// p = z + (rz / rz_old) p
__global__ void xpay_kernel(const double* __restrict__ z, double* __restrict__ p, int64_t n, const double* scal,
                            int rz, int rz_old) {
  const double beta = scal[rz] / scal[rz_old];
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    p[i] = z[i] + beta * p[i];
}

// r = b - Ax; rr = r.r
__global__ void residual_kernel(const double* __restrict__ b, const double* __restrict__ ax, double* __restrict__ r,
                                int64_t n, double* scal, GridSum g, int rr) {
  double s = 0;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const double ri = b[i] - ax[i];
    r[i] = ri;
    s += ri * ri;
  }
  double total;
  if (grid_sum(g, s, total)) scal[rr] = total;
}

}  // namespace

void load_pcg_kernels() {
  load_kernels(dot_kernel, update_xr, verdict_kernel, reset_kernel, rz_kernel, xpay_kernel, residual_kernel);
}

GpuPcg::GpuPcg(int32_t n, bool use_graphs, DeviceScalarSum* across_ranks)
    : n_(n),
      use_graphs_(use_graphs),
      across_ranks_(across_ranks),
      x_(size_t(n)),
      r_(size_t(n)),
      z_(size_t(n)),
      p_(size_t(n)),
      q_(size_t(n)),
      partials_(size_t(kReduceBlocks)),
      scalars_(size_t(scalar::count)),
      finished_(1) {
  PGSIM_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  PGSIM_CUDA(cudaMallocHost(&rr_host_, 2 * sizeof(double)));
  for (auto& e : step_done_) PGSIM_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  PGSIM_CUDA(cudaMemset(finished_.data(), 0, sizeof(unsigned)));
  PGSIM_CUDA(cudaMemset(scalars_.data(), 0, scalar::count * sizeof(double)));
}

GpuPcg::~GpuPcg() {
  if (start_) cudaGraphExecDestroy(start_);
  if (step_) cudaGraphExecDestroy(step_);
  for (auto& e : step_done_) cudaEventDestroy(e);
  if (history_) cudaFreeHost(history_);
  cudaFreeHost(rr_host_);
  cudaStreamDestroy(stream_);
}

void GpuPcg::launch_first_half(DeviceSpmv& A) {
  const GridSum g{partials_.data(), finished_.data()};
  A.multiply(p_.data(), q_.data(), stream_);
  dot_kernel<<<reduce_blocks(n_), kBlock, 0, stream_>>>(p_.data(), q_.data(), n_, g, scalars_.data() + scalar::pq);
  PGSIM_CUDA_LAUNCH();
  sum_across_ranks(scalar::pq);
  update_xr<<<reduce_blocks(n_), kBlock, 0, stream_>>>(x_.data(), r_.data(), p_.data(), q_.data(), n_,
                                                       scalars_.data(), g, history_, across_ranks_ == nullptr);
  PGSIM_CUDA_LAUNCH();
  if (across_ranks_) {
    sum_across_ranks(scalar::rr_local);
    verdict_kernel<<<1, 1, 0, stream_>>>(scalars_.data(), history_);
    PGSIM_CUDA_LAUNCH();
  }
}

void GpuPcg::sum_across_ranks(int scalar) {
  if (across_ranks_) across_ranks_->sum(scalars_.data() + scalar, 1, stream_);
}

void GpuPcg::launch_second_half(DevicePreconditioner& M) {
  const GridSum g{partials_.data(), finished_.data()};
  M.apply(r_.data(), z_.data(), stream_);
  rz_kernel<<<reduce_blocks(n_), kBlock, 0, stream_>>>(r_.data(), z_.data(), n_, scalars_.data(), g, scalar::rz,
                                                       scalar::rz_old);
  PGSIM_CUDA_LAUNCH();
  sum_across_ranks(scalar::rz);  // rz_old kept the previous rz, already summed
  xpay_kernel<<<reduce_blocks(n_), kBlock, 0, stream_>>>(z_.data(), p_.data(), n_, scalars_.data(), scalar::rz,
                                                         scalar::rz_old);
  PGSIM_CUDA_LAUNCH();
}

// CG's start from r at iteration `first_iteration`: the threshold, z = M r, rz, p = z, and the
// first iteration's first half.
void GpuPcg::launch_start(double tolerance_sq, double first_iteration, DeviceSpmv& A, DevicePreconditioner& M) {
  reset_kernel<<<1, 1, 0, stream_>>>(scalars_.data(), tolerance_sq, first_iteration);
  PGSIM_CUDA_LAUNCH();
  M.apply(r_.data(), z_.data(), stream_);
  rz_kernel<<<reduce_blocks(n_), kBlock, 0, stream_>>>(r_.data(), z_.data(), n_, scalars_.data(),
                                                       GridSum{partials_.data(), finished_.data()}, scalar::rz,
                                                       scalar::rz_old);
  PGSIM_CUDA_LAUNCH();
  sum_across_ranks(scalar::rz);
  PGSIM_CUDA(cudaMemcpyAsync(p_.data(), z_.data(), size_t(n_) * sizeof(double), cudaMemcpyDeviceToDevice, stream_));
  launch_first_half(A);
}

// One iteration after the first: z = M r; rz; p = z + beta p; q = A p; pq; x, r update; rr and verdict.
void GpuPcg::launch_iteration(DeviceSpmv& A, DevicePreconditioner& M) {
  if (!use_graphs_) {
    launch_second_half(M);
    launch_first_half(A);
    return;
  }
  PGSIM_CUDA(cudaGraphLaunch(graphs(A, M, tolerance_sq_).step, stream_));
}

// The start (from iteration 0 with tolerance_sq) and the iteration as graphs, captured on first use
// for this A, M and tolerance.
GpuPcg::Graphs GpuPcg::graphs(DeviceSpmv& A, DevicePreconditioner& M, double tolerance_sq) {
  if (graph_A_ != A.instance.value() || graph_M_ != M.instance.value() || !(graph_tolerance_sq_ == tolerance_sq)) {
    for (auto* exec : {&start_, &step_})
      if (*exec) {
        PGSIM_CUDA(cudaGraphExecDestroy(*exec));
        *exec = nullptr;
      }
    graph_A_ = A.instance.value();
    graph_M_ = M.instance.value();
    graph_tolerance_sq_ = tolerance_sq;
  }
  auto capture = [&](cudaGraphExec_t& exec, auto&& launch) {
    if (exec) return;
    cudaGraph_t graph;
    PGSIM_CUDA(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    launch();
    PGSIM_CUDA(cudaStreamEndCapture(stream_, &graph));
    PGSIM_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    PGSIM_CUDA(cudaGraphDestroy(graph));
    PGSIM_CUDA(cudaGraphUpload(exec, stream_));
  };
  capture(start_, [&] { launch_start(tolerance_sq, 0.0, A, M); });
  capture(step_, [&] {
    launch_second_half(M);
    launch_first_half(A);
  });
  return {start_, step_};
}

void GpuPcg::prepare(DeviceSpmv& A, DevicePreconditioner& M, const SolveControl& control) {
  reserve_history(control.max_iterations + 1);
  if (!use_graphs_) return;
  graphs(A, M, control.tolerance * control.tolerance);
  PGSIM_CUDA(cudaStreamSynchronize(stream_));
}

// The history is baked into the graphs: growing it drops them.
void GpuPcg::reserve_history(int iterations) {
  if (iterations <= history_size_) return;
  if (history_) PGSIM_CUDA(cudaFreeHost(history_));
  PGSIM_CUDA(cudaHostAlloc(&history_, size_t(iterations) * 2 * sizeof(double), cudaHostAllocMapped));
  history_size_ = iterations;
  graph_A_ = graph_M_ = 0;  // drops the graphs at their next use
}

void GpuPcg::queue_residual(DeviceSpmv& A, const double* b) {
  A.multiply(x_.data(), q_.data(), stream_);
  residual_kernel<<<reduce_blocks(n_), kBlock, 0, stream_>>>(b, q_.data(), r_.data(), n_, scalars_.data(),
                                                             GridSum{partials_.data(), finished_.data()}, scalar::rr);
  PGSIM_CUDA_LAUNCH();
  sum_across_ranks(scalar::rr);
}

double GpuPcg::read_scalars() {
  PGSIM_CUDA(cudaMemcpyAsync(rr_host_, scalars_.data() + scalar::rr, 2 * sizeof(double), cudaMemcpyDeviceToHost,
                             stream_));
  PGSIM_CUDA(cudaStreamSynchronize(stream_));
  return rr_host_[0];
}

SolveResult GpuPcg::solve(DeviceSpmv& A, const double* b, double* x, DevicePreconditioner& M,
                          const SolveControl& control) {
  SolveResult result;
  const GridSum g{partials_.data(), finished_.data()};
  reserve_history(control.max_iterations + 1);
  // ||b|| and the first true residual come back in one round trip (a step of a transient solves
  // a small system, where each host wait costs about as much as an iteration).
  dot_kernel<<<reduce_blocks(n_), kBlock, 0, stream_>>>(b, b, n_, g, scalars_.data() + scalar::bb);
  PGSIM_CUDA_LAUNCH();
  sum_across_ranks(scalar::bb);
  PGSIM_CUDA(cudaMemcpyAsync(x_.data(), x, size_t(n_) * sizeof(double), cudaMemcpyDeviceToDevice, stream_));
  queue_residual(A, b);
  const double rr0 = read_scalars(), bnorm = std::sqrt(rr_host_[1]);
  if (n_ == 0 || bnorm == 0.0) {
    if (n_) PGSIM_CUDA(cudaMemsetAsync(x, 0, size_t(n_) * sizeof(double), stream_));
    PGSIM_CUDA(cudaStreamSynchronize(stream_));
    result.converged = true;
    return result;
  }
  tolerance_sq_ = control.tolerance * control.tolerance;
  double rel = std::sqrt(rr0) / bnorm;
  int it = 0;
  // Same control flow as pcg_cpu: when the recurrence claims convergence the true residual is
  // checked, and CG restarts from it if it is not there yet.
  while (rel > control.tolerance && it < control.max_iterations) {
    if (use_graphs_ && it == 0) PGSIM_CUDA(cudaGraphLaunch(graphs(A, M, tolerance_sq_).start, stream_));
    else launch_start(tolerance_sq_, double(it), A, M);  // a restart (rare): its count goes on
    PGSIM_CUDA(cudaEventRecord(step_done_[it % 2], stream_));
    while (it < control.max_iterations) {
      if (it + 1 < control.max_iterations) {  // queue the next iteration before waiting for this one
        launch_iteration(A, M);
        PGSIM_CUDA(cudaEventRecord(step_done_[(it + 1) % 2], stream_));
      }
      PGSIM_CUDA(cudaEventSynchronize(step_done_[it % 2]));
      const double rr = history_[2 * it];
      const bool converged = history_[2 * it + 1] != 0.0;
      rel = std::sqrt(rr) / bnorm;
      ++it;
      if (control.progress) control.progress(it, rel);
      if (converged) break;
    }
    // The true residual, and x_ out to x in the same round trip: x is the result unless CG restarts,
    // and a restart copies it out again.
    queue_residual(A, b);
    PGSIM_CUDA(cudaMemcpyAsync(x, x_.data(), size_t(n_) * sizeof(double), cudaMemcpyDeviceToDevice, stream_));
    rel = std::sqrt(read_scalars()) / bnorm;
  }
  result.iterations = it;
  result.relative_residual = rel;
  result.converged = rel <= control.tolerance;
  return result;
}

}  // namespace pgsim::gpu
