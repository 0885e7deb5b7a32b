#include "tran/step_solver.hpp"

#include "pcg/pcg_cpu.hpp"
#include "pcg/preconditioner_factory.hpp"

namespace pgsim {
namespace {
std::optional<EliminatedSystem> chains_of(const CsrMatrix& A, bool eliminate) {
  if (!eliminate) return std::nullopt;
  return eliminate_chains(A, std::vector<double>(static_cast<size_t>(A.rows), 0.0));
}
}  // namespace

KeptSystem::KeptSystem(const CsrMatrix& A, bool eliminate)
    : A_(A),
      chains_(chains_of(A, eliminate)),
      rhs_(chains_ ? static_cast<size_t>(A.rows) : 0),
      b_kept_(chains_ ? chains_->kept.size() : 0),
      x_kept_(chains_ ? chains_->kept.size() : 0) {}

SolveResult DirectStepSolver::solve(const std::vector<double>& b, std::vector<double>& x) {
  return kept_.solve(b, x, [&](const std::vector<double>& b_kept, std::vector<double>& x_kept) {
    factor_.solve(b_kept.data(), x_kept.data());
    SolveResult r;
    r.converged = true;  // the residual is not computed per step (a factorisation's is ~1e-15)
    return r;
  });
}

PcgStepSolver::PcgStepSolver(const CsrMatrix& A, const std::string& precond, const CmgOptions& cmg, bool eliminate,
                             const SolveControl& control)
    : kept_(A, eliminate), M_(make_cpu_preconditioner(precond, kept_.matrix(), cmg)), control_(control) {}

SolveResult PcgStepSolver::solve(const std::vector<double>& b, std::vector<double>& x) {
  return kept_.solve(b, x, [&](const std::vector<double>& b_kept, std::vector<double>& x_kept) {
    return pcg_cpu(kept_.matrix(), b_kept, x_kept, *M_, control_);
  });
}

}  // namespace pgsim
