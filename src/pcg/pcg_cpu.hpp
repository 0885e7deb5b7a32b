#pragma once
// PCG in one process: the iteration of pcg.hpp over a CSR matrix and OpenMP vector kernels.
#include <vector>

#include "mna/csr.hpp"
#include "pcg/pcg.hpp"

namespace pgsim {

// The one-process back end: A's SpMV and the fixed-order dot (the same bits for any thread count).
class CsrBackend : public PcgBackend {
 public:
  explicit CsrBackend(const CsrMatrix& A) : A_(A) {}
  size_t size() const override { return static_cast<size_t>(A_.rows); }
  void multiply(const double* x, double* y) const override { A_.multiply(x, y); }
  double dot(const std::vector<double>& a, const std::vector<double>& b) const override;

 private:
  const CsrMatrix& A_;
};

// Preconditioned conjugate gradient on the CPU. x holds the initial guess on entry.
// Stops when ||b - A x||_2 <= tol ||b||_2 (the true residual, checked at the end).
SolveResult pcg_cpu(const CsrMatrix& A, const std::vector<double>& b, std::vector<double>& x,
                    const Preconditioner& M, const SolveControl& control);

// ||b - A x||_2 / ||b||_2 (0 when b = 0).
double relative_residual(const CsrMatrix& A, const std::vector<double>& b, const std::vector<double>& x);

}  // namespace pgsim
