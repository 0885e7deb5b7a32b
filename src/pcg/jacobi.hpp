#pragma once
#include <vector>

#include "mna/csr.hpp"
#include "pcg/preconditioner.hpp"

namespace pgsim {

// z = D^{-1} r.
class JacobiPreconditioner : public Preconditioner {
 public:
  explicit JacobiPreconditioner(const CsrMatrix& A);
  void apply(const double* r, double* z) const override;
  std::string name() const override { return "jacobi"; }

 private:
  std::vector<double> inv_diag_;
};

// z = r.
class IdentityPreconditioner : public Preconditioner {
 public:
  explicit IdentityPreconditioner(int32_t n) : n_(n) {}
  void apply(const double* r, double* z) const override;
  std::string name() const override { return "none"; }

 private:
  int32_t n_;
};

}  // namespace pgsim
