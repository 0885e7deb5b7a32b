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

#ifdef PGSIM_HAVE_CHOLMOD
using Factorization = Eigen::CholmodDecomposition<Eigen::SparseMatrix<double, Eigen::ColMajor, int32_t>, Eigen::Lower>;
#else
using Factorization = Eigen::SimplicialLDLT<Eigen::SparseMatrix<double, Eigen::ColMajor, int32_t>, Eigen::Lower>;
#endif

struct DirectFactor::Impl {
  Factorization solver;
};

DirectFactor::DirectFactor(const CsrMatrix& A) : impl_(std::make_unique<Impl>()), n_(A.rows) {
  if (n_ == 0) return;
  // A is symmetric: its CSR arrays read as CSC are the same matrix.
  Eigen::Map<const Eigen::SparseMatrix<double, Eigen::ColMajor, int32_t>> G(n_, n_, A.nnz(), A.ptr.data(),
                                                                           A.col.data(), A.val.data());
  impl_->solver.compute(G);
  if (impl_->solver.info() != Eigen::Success)
    throw std::runtime_error("direct solver: factorization failed (matrix not positive definite?)");
}

DirectFactor::~DirectFactor() = default;

void DirectFactor::solve(const double* b, double* x) const {
  if (n_ == 0) return;
  Eigen::Map<const Eigen::VectorXd> rhs(b, n_);
  Eigen::Map<Eigen::VectorXd> sol(x, n_);
  sol = impl_->solver.solve(rhs);
}

SolveResult solve_direct(const CsrMatrix& A, const std::vector<double>& b, std::vector<double>& x) {
  SolveResult result;
  x.assign(static_cast<size_t>(A.rows), 0.0);
  if (A.rows == 0) {
    result.converged = true;
    return result;
  }
  DirectFactor(A).solve(b.data(), x.data());
  result.relative_residual = relative_residual(A, b, x);
  result.converged = std::isfinite(result.relative_residual);
  return result;
}

}  // namespace pgsim
