#pragma once
// The preconditioned conjugate gradient iteration, written once against the back end that
// supplies the operator and the inner product: one process (pcg_cpu.hpp: the matrix and an
// OpenMP dot) or several (dist/halo_backend.hpp: SpMV with a halo exchange, dot by all-reduce).
#include <cstddef>
#include <vector>

#include "pcg/preconditioner.hpp"
#include "pcg/solve_result.hpp"

namespace pgsim {

// Vectors are this process's part of the global vector (all of it on one process).
class PcgBackend {
 public:
  virtual ~PcgBackend() = default;
  virtual size_t size() const = 0;                                 // length of this process's part
  virtual void multiply(const double* x, double* y) const = 0;     // y = A x
  // The inner product over the whole vector: every process gets the same value.
  virtual double dot(const std::vector<double>& a, const std::vector<double>& b) const = 0;
};

// PCG from the initial guess in x. Stops when ||b - A x||_2 <= tol ||b||_2 (the true residual,
// checked at the end). M acts on this process's part; it must be symmetric positive definite
// as a global operator (a block-diagonal M whose blocks are SPD is).
SolveResult pcg(const PcgBackend& A, const std::vector<double>& b, std::vector<double>& x, const Preconditioner& M,
                const SolveControl& control);

}  // namespace pgsim
