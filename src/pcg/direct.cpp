#include "pcg/direct.hpp"

#include <Eigen/Sparse>
#include <cmath>
#include <stdexcept>
#ifdef PGSIM_HAVE_CHOLMOD
#include <Eigen/CholmodSupport>
#endif

#include "pcg/pcg_cpu.hpp"

namespace pgsim {

std::string direct_solver_name() {
#ifdef PGSIM_HAVE_CHOLMOD
  return "cholmod";
#else
  return "eigen-ldlt";
#endif
}

SolveResult solve_direct(const CsrMatrix& A, const std::vector<double>& b, std::vector<double>& x) {
  const Eigen::Index n = A.rows;
  SolveResult result;
  x.assign(static_cast<size_t>(n), 0.0);
  if (n == 0) {
    result.converged = true;
    return result;
  }
  // A is symmetric: its CSR arrays read as CSC are the same matrix.
  Eigen::Map<const Eigen::SparseMatrix<double, Eigen::ColMajor, int32_t>> G(n, n, A.nnz(), A.ptr.data(), A.col.data(),
                                                                           A.val.data());
  Eigen::Map<const Eigen::VectorXd> rhs(b.data(), n);
  Eigen::Map<Eigen::VectorXd> sol(x.data(), n);
#ifdef PGSIM_HAVE_CHOLMOD
  Eigen::CholmodDecomposition<Eigen::SparseMatrix<double, Eigen::ColMajor, int32_t>, Eigen::Lower> solver;
#else
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double, Eigen::ColMajor, int32_t>, Eigen::Lower> solver;
#endif
  solver.compute(G);
  if (solver.info() != Eigen::Success) throw std::runtime_error("direct solver: factorization failed (matrix not positive definite?)");
  sol = solver.solve(rhs);
  result.relative_residual = relative_residual(A, b, x);
  result.converged = std::isfinite(result.relative_residual);
  return result;
}

}  // namespace pgsim
