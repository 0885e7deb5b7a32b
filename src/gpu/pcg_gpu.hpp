#pragma once
// PCG with every vector operation on the device. The scalars (alpha, beta, the dot products)
// stay in device memory, so an iteration, and CG's start, are fixed sequences of launches that
// are captured once in CUDA graphs and replayed. A solve waits for the device once before its
// iterations (||b|| and the first true residual) and once after (the true residual). Each iteration's ||r||^2 and "converged" flag are written by the
// device straight into mapped host memory; the host queues iteration k+1 before it waits for
// k's flag, so the round trip hides behind the next iteration's kernels. Once the flag is set
// the queued iteration leaves x and r alone, so the result and the iteration count are those of
// the CPU PCG (same recurrence, same restart on the true residual).
//
// Distributed (one rank per GPU): A is the rank's part of the operator (gpu/halo_spmv.hpp), M
// its block preconditioner, the vectors its rows; every inner product is summed across ranks in
// stream order by a DeviceScalarSum right after its local part, before anything reads it, so
// every rank holds the same scalars, takes the same verdicts and runs the same iterations.
#include <cuda_runtime_api.h>

#include <memory>

#include "gpu/device_buffer.hpp"
#include "gpu/device_preconditioner.hpp"
#include "gpu/spmv.hpp"
#include "pcg/solve_result.hpp"

namespace pgsim::gpu {

// Loads the PCG kernels (launch.cuh load_kernels).
void load_pcg_kernels();

// Sums `count` device doubles over the ranks of a distributed solve, in place, queued on
// `stream` (an all-reduce: gpu/nccl_comm.hpp). The result must be bitwise the same on every rank.
class DeviceScalarSum {
 public:
  virtual ~DeviceScalarSum() = default;
  virtual void sum(double* values, int count, cudaStream_t stream) = 0;
};

class GpuPcg {
 public:
  // Workspace for systems of n unknowns. use_graphs = false launches kernel by kernel
  // (needed when the preconditioner synchronizes, e.g. to read its per-level timers).
  // across_ranks: null for a single-process solve; else it sums every inner product over the
  // ranks, and must outlive this.
  GpuPcg(int32_t n, bool use_graphs, DeviceScalarSum* across_ranks = nullptr);
  ~GpuPcg();
  GpuPcg(const GpuPcg&) = delete;
  GpuPcg& operator=(const GpuPcg&) = delete;

  // Everything a solve with A, M and control (max_iterations, tolerance) builds on first use,
  // built now: the iteration history and the two graphs (CG's start: the threshold, the first
  // preconditioner application and iteration; one later iteration), captured, instantiated and
  // uploaded to the device.
  // Optional: solve() does what is missing.
  void prepare(DeviceSpmv& A, DevicePreconditioner& M, const SolveControl& control);

  // Solves A x = b; b and x are device arrays of n, x holds the initial guess on entry.
  // The graphs are kept while A and M stay the same, so repeated solves do not rebuild them.
  SolveResult solve(DeviceSpmv& A, const double* b, double* x, DevicePreconditioner& M, const SolveControl& control);
  cudaStream_t stream() const { return stream_; }

 private:
  void launch_first_half(DeviceSpmv& A);                          // q = A p; pq; x, r update; rr
  void launch_second_half(DevicePreconditioner& M);               // z = M r; rz; p = z + beta p
  void queue_residual(DeviceSpmv& A, const double* b);  // r = b - A x_, rr = r.r (true residual)
  void sum_across_ranks(int scalar);                    // in place; nothing in a single-process solve
  double read_scalars();  // waits for the stream; ||r||^2, with ||b||^2 beside it in rr_host_[1]
  void launch_start(double tolerance_sq, double first_iteration, DeviceSpmv& A, DevicePreconditioner& M);
  void launch_iteration(DeviceSpmv& A, DevicePreconditioner& M);
  struct Graphs {
    cudaGraphExec_t start, step;
  };
  Graphs graphs(DeviceSpmv& A, DevicePreconditioner& M, double tolerance_sq);
  void reserve_history(int iterations);

  int32_t n_;
  bool use_graphs_;
  DeviceScalarSum* across_ranks_;
  cudaStream_t stream_ = nullptr;
  DeviceBuffer<double> x_, r_, z_, p_, q_, partials_, scalars_;
  DeviceBuffer<unsigned> finished_;
  double* rr_host_ = nullptr;  // pinned: ||r||^2, ||b||^2
  double* history_ = nullptr;  // mapped host memory: per iteration ||r||^2 and the converged flag
  int history_size_ = 0;
  cudaEvent_t step_done_[2] = {nullptr, nullptr};
  cudaGraphExec_t start_ = nullptr, step_ = nullptr;
  uint64_t graph_A_ = 0;  // InstanceId of the A and M the graphs were captured with; 0: none
  uint64_t graph_M_ = 0;
  double graph_tolerance_sq_ = -1;  // the tolerance^2 baked into start_
  double tolerance_sq_ = 0;         // the solve's
};

}  // namespace pgsim::gpu
