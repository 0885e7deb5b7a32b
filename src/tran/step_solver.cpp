#include "tran/step_solver.hpp"

#include "pcg/pcg_cpu.hpp"
#include "pcg/preconditioner_factory.hpp"

namespace pgsim {

SolveResult DirectStepSolver::solve(const std::vector<double>& b, std::vector<double>& x) {
  factor_.solve(b.data(), x.data());
  SolveResult r;
  r.converged = true;  // the residual is not computed per step (a factorisation's is ~1e-15)
  return r;
}

namespace {
std::optional<EliminatedSystem> chains_of(const CsrMatrix& A, bool eliminate) {
  if (!eliminate) return std::nullopt;
  return eliminate_chains(A, std::vector<double>(static_cast<size_t>(A.rows), 0.0));
}
}  // namespace

PcgStepSolver::PcgStepSolver(const CsrMatrix& A, const std::string& precond, const CmgOptions& cmg, bool eliminate,
                             const SolveControl& control)
    : chains_(chains_of(A, eliminate)),
      A_(chains_ ? chains_->G : A),
      M_(make_cpu_preconditioner(precond, A_, cmg)),
      control_(control),
      rhs_(static_cast<size_t>(A.rows)),
      b_kept_(static_cast<size_t>(A_.rows)),
      x_kept_(static_cast<size_t>(A_.rows)) {}

SolveResult PcgStepSolver::solve(const std::vector<double>& b, std::vector<double>& x) {
  if (!chains_) return pcg_cpu(A_, b, x, *M_, control_);
  chains_->condense(b.data(), rhs_.data(), b_kept_.data());
  for (size_t k = 0; k < chains_->kept.size(); ++k) x_kept_[k] = x[chains_->kept[k]];
  SolveResult r = pcg_cpu(A_, b_kept_, x_kept_, *M_, control_);
  chains_->recover(x_kept_.data(), rhs_.data(), x.data());
  return r;
}

}  // namespace pgsim
