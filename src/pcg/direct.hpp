#pragma once
// The accuracy reference: a sparse Cholesky solve of G x = b in double precision
// (CHOLMOD when the build found it, else Eigen's SimplicialLDLT).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mna/csr.hpp"
#include "pcg/solve_result.hpp"

namespace pgsim {

SolveResult solve_direct(const CsrMatrix& A, const std::vector<double>& b, std::vector<double>& x);
std::string direct_solver_name();

// A factorisation kept for many right-hand sides (transient steps): factor once, then each
// solve is two triangular solves. A: symmetric positive definite, both triangles stored.
class DirectFactor {
 public:
  explicit DirectFactor(const CsrMatrix& A);  // std::runtime_error when the factorization fails
  ~DirectFactor();
  DirectFactor(const DirectFactor&) = delete;
  DirectFactor& operator=(const DirectFactor&) = delete;
  void solve(const double* b, double* x) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int32_t n_ = 0;
};

}  // namespace pgsim
