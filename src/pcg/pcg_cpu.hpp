#pragma once
#include <vector>

#include "mna/csr.hpp"
#include "pcg/preconditioner.hpp"
#include "pcg/solve_result.hpp"

namespace pgsim {

// Preconditioned conjugate gradient on the CPU. x holds the initial guess on entry.
// Stops when ||b - A x||_2 <= tol ||b||_2 (the true residual, checked at the end).
SolveResult pcg_cpu(const CsrMatrix& A, const std::vector<double>& b, std::vector<double>& x,
                    const Preconditioner& M, const SolveControl& control);

// ||b - A x||_2 / ||b||_2 (0 when b = 0).
double relative_residual(const CsrMatrix& A, const std::vector<double>& b, const std::vector<double>& x);

}  // namespace pgsim
