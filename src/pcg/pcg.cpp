#include "pcg/pcg.hpp"

#include <cmath>
#include <cstdint>

#include "mna/touched_vector.hpp"
#include "pcg/vector_ops.hpp"

namespace pgsim {
namespace {

// r = b - A x; returns ||r||.
double true_residual(const PcgBackend& A, const std::vector<double>& b, const std::vector<double>& x,
                     std::vector<double>& r, std::vector<double>& scratch) {
  A.multiply(x.data(), scratch.data());
  const auto n = static_cast<int64_t>(r.size());
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) r[i] = b[i] - scratch[i];
  return std::sqrt(A.dot(r, r));
}

}  // namespace

SolveResult pcg(const PcgBackend& A, const std::vector<double>& b, std::vector<double>& x, const Preconditioner& M,
                const SolveControl& control) {
  const size_t n = A.size();
  SolveResult result;
  // Every decision below depends on global reductions only, so all processes take the same branch.
  const double bnorm = std::sqrt(A.dot(b, b));
  if (bnorm == 0.0) {
    x.assign(n, 0.0);
    result.converged = true;
    return result;
  }
  // Each written before it is read (r and q by true_residual, z by M, p = z): zeroed only because
  // a std::vector must be, in pages faulted in by all threads.
  std::vector<double> r, z, p, q;
  for (std::vector<double>* v : {&r, &z, &p, &q}) assign_touched(*v, n);
  double rel = true_residual(A, b, x, r, q) / bnorm;
  int it = 0;
  // The recurrence residual drifts from the true one near 1e-10; when it claims convergence
  // the true residual is checked, and CG restarts from it if it is not there yet.
  while (rel > control.tolerance && it < control.max_iterations) {
    M.apply(r.data(), z.data());
    p = z;
    double rz = A.dot(r, z);
    while (it < control.max_iterations) {
      A.multiply(p.data(), q.data());
      const double alpha = rz / A.dot(p, q);
      axpy(alpha, p, x);
      axpy(-alpha, q, r);
      rel = std::sqrt(A.dot(r, r)) / bnorm;
      ++it;
      if (control.progress) control.progress(it, rel);
      if (rel <= control.tolerance) break;
      M.apply(r.data(), z.data());
      const double rz_next = A.dot(r, z);
      xpay(z, rz_next / rz, p);
      rz = rz_next;
    }
    rel = true_residual(A, b, x, r, q) / bnorm;
  }
  result.iterations = it;
  result.relative_residual = rel;
  result.converged = rel <= control.tolerance;
  return result;
}

}  // namespace pgsim
