#pragma once
// The per-step kernels of the GPU transient stepper (gpu/gpu_stepper.hpp), as launchers on a
// stream. Vectors and tables are device arrays; nothing here synchronizes.
#include <cuda_runtime_api.h>

#include <cstdint>

namespace pgsim::gpu {

// The start of a step, one thread per unknown. The right-hand side b = b0 + S(t) + H_n
// (tran/step_system.hpp): unknown i's terms are terms[term_ptr[i] .. term_ptr[i + 1]), each 2 k + s:
// values[k] subtracted (s = 0, the term's plus end) or added (s = 1, its minus end), in the order
// the CPU's step_rhs stamps them, so the sum is the CPU's. And PCG's first guess, the CPU
// stepper's (tran/stepper.hpp): x = 2 x_n - x_{n-1} from x = x_n, x_previous = x_{n-1}, which
// then holds x_n.
void launch_step_start(const double* b0, const int32_t* term_ptr, const int32_t* terms, const double* values,
                       int32_t n, double* b, double* x, double* x_previous, cudaStream_t stream);

// The capacitors and inductors after a step (advance_history): per branch k, from x_{n+1},
// current[k] = i_{n+1} and history[k] = hist_{n+1}.
struct DeviceBranches {
  const int32_t *plus, *minus;
  const double *offset, *g;
  const uint8_t* inductor;
  double *current, *history;
  int32_t count;
};
void launch_advance_branches(const DeviceBranches& branches, bool trapezoidal, const double* x, cudaStream_t stream);

// lo = min(lo, x), hi = max(hi, x) over the n unknowns; probed[p] = probe_offset[p] + x[probe_unknown[p]]
// (the offset alone for unknown -1) for the np probes.
void launch_track(const double* x, int32_t n, double* lo, double* hi, const int32_t* probe_unknown,
                  const double* probe_offset, int32_t np, double* probed, cudaStream_t stream);

}  // namespace pgsim::gpu
