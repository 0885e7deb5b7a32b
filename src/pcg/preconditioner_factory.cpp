#include "pcg/preconditioner_factory.hpp"

#include "cmg/cmg_preconditioner.hpp"
#include "parser/input_error.hpp"
#include "pcg/ic0.hpp"
#include "pcg/jacobi.hpp"

namespace pgsim {

std::vector<std::string> cpu_preconditioner_names() { return {"cmg", "jacobi", "none", "ic0"}; }

std::unique_ptr<Preconditioner> make_cpu_preconditioner(const std::string& name, const CsrMatrix& A,
                                                        const CmgOptions& cmg) {
  if (name == "cmg") return std::make_unique<CmgPreconditioner>(A, cmg);
  if (name == "jacobi") return std::make_unique<JacobiPreconditioner>(A);
  if (name == "ic0") return std::make_unique<Ic0Preconditioner>(A);
  if (name == "none") return std::make_unique<IdentityPreconditioner>(A.rows);
  throw InputError("unknown preconditioner '" + name + "'");
}

}  // namespace pgsim
