#pragma once
// The direct solve at the bottom of the CMG hierarchy.
#include "cmg/hierarchy.hpp"

namespace pgsim {

// Sparse Cholesky (AMD order) of the connected Laplacian A with one vertex grounded.
// Throws std::runtime_error when the grounded matrix is not positive definite (A disconnected).
CoarseFactor factor_coarsest(const CsrMatrix& A);

// x = the solution of A x = r with x[grounded] = 0 (r is taken as is: its grounded entry is ignored).
// scratch holds at least factor.L.rows values.
void solve_coarsest(const CoarseFactor& factor, const double* r, double* x, double* scratch);

}  // namespace pgsim
