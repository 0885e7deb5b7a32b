#pragma once
// The accuracy reference: a sparse Cholesky solve of G x = b in double precision
// (CHOLMOD when the build found it, else Eigen's SimplicialLDLT).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mna/csr.hpp"
#include "pcg/solve_result.hpp"

namespace pgsim {

SolveResult solve_direct(const CsrMatrix& A, const std::vector<double>& b, std::vector<double>& x);
std::string direct_solver_name();

// The entries of A's Cholesky factor under CHOLMOD's fill-reducing ordering, from a symbolic
// analysis (no numbers are computed: milliseconds for 10^4 unknowns); nullopt without CHOLMOD.
// Each solve with the factor reads them twice, so they set a DirectFactor::solve's cost.
std::optional<int64_t> factor_entries(const CsrMatrix& A);

// A factorisation kept for many right-hand sides (transient steps): factor once, then each
// solve is two triangular solves. A: symmetric positive definite, both triangles stored.
// solve reuses the factor's workspace, so one DirectFactor serves one thread at a time.
class DirectFactor {
 public:
  // std::runtime_error when the factorization fails. With CHOLMOD, a simplicial factor is solved
  // by an LdlSolve (pcg/ldl_solve.hpp) on up to `threads` threads, unless cholmod_solve (tests and
  // benchmarks compare the two); a supernodal one always by CHOLMOD.
  explicit DirectFactor(const CsrMatrix& A, int threads = 1, bool cholmod_solve = false);
  ~DirectFactor();
  DirectFactor(const DirectFactor&) = delete;
  DirectFactor& operator=(const DirectFactor&) = delete;
  void solve(const double* b, double* x);
  int threads() const;  // that a solve runs on

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int32_t n_ = 0;
};

}  // namespace pgsim
