#pragma once
// The accuracy reference: a sparse Cholesky solve of G x = b in double precision
// (CHOLMOD when the build found it, else Eigen's SimplicialLDLT).
#include <string>
#include <vector>

#include "mna/csr.hpp"
#include "pcg/solve_result.hpp"

namespace pgsim {

SolveResult solve_direct(const CsrMatrix& A, const std::vector<double>& b, std::vector<double>& x);
std::string direct_solver_name();

}  // namespace pgsim
