#pragma once
// Solvers of the step equation A x = b (tran/step_system.hpp): A is fixed for the whole run, so
// each solver does its expensive work once, in its constructor, and then serves every step.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cmg/builder.hpp"
#include "mna/chain_elimination.hpp"
#include "mna/csr.hpp"
#include "pcg/direct.hpp"
#include "pcg/preconditioner.hpp"
#include "pcg/solve_result.hpp"

namespace pgsim {

class StepSolver {
 public:
  virtual ~StepSolver() = default;
  // x: the first guess on entry (an iterative solver starts from it; CpuStepper: extrapolated from
  // the last two steps), this step's solution on return.
  virtual SolveResult solve(const std::vector<double>& b, std::vector<double>& x) = 0;
  virtual std::vector<LevelStats> levels() const { return {}; }
  // The threads a solve runs on when it has its own count (the factorisation's); the stepper's
  // loops over sources and branches take as many. 1: the run's OpenMP default.
  virtual int threads() const { return 1; }
};

// Wire chains (mna/chain_elimination.hpp) eliminated once from a fixed matrix A: each step condenses
// its b onto the kept unknowns, solves the kept system and recovers the chains, exactly. Without
// elimination the kept system is A itself.
class KeptSystem {
 public:
  KeptSystem(const CsrMatrix& A, bool eliminate);
  const CsrMatrix& matrix() const { return chains_ ? chains_->G : A_; }
  // x: A's unknowns, the first guess on entry (kept_solve starts from its kept part), this
  // step's on return. kept_solve(b_kept, x_kept) solves the kept system into x_kept.
  template <class KeptSolve>
  SolveResult solve(const std::vector<double>& b, std::vector<double>& x, KeptSolve&& kept_solve) {
    if (!chains_) return kept_solve(b, x);
    chains_->condense(b.data(), rhs_.data(), b_kept_.data());
    for (size_t k = 0; k < chains_->kept.size(); ++k) x_kept_[k] = x[size_t(chains_->kept[k])];
    const SolveResult r = kept_solve(b_kept_, x_kept_);
    chains_->recover(x_kept_.data(), rhs_.data(), x.data());
    return r;
  }

 private:
  const CsrMatrix& A_;
  std::optional<EliminatedSystem> chains_;
  std::vector<double> rhs_, b_kept_, x_kept_;
};

// Sparse Cholesky (CHOLMOD when built with it) of the kept system: one factorisation, per step
// two triangular solves and the chains' condensation and recovery (ibmpg1t's step matrix: a third
// fewer unknowns to factor; about a sixth off the step on the 2-core development VM, within the
// run-to-run noise on the H100 machine).
class DirectStepSolver : public StepSolver {
 public:
  // threads: DirectFactor's.
  DirectStepSolver(const CsrMatrix& A, bool eliminate, int threads = 1)
      : kept_(A, eliminate), factor_(kept_.matrix(), threads) {}
  SolveResult solve(const std::vector<double>& b, std::vector<double>& x) override;
  int threads() const override { return factor_.threads(); }

 private:
  KeptSystem kept_;
  DirectFactor factor_;
};

// PCG on the CPU, warm-started from the previous step, on the kept system; the preconditioner
// (`precond`, e.g. cmg) is built once on the kept matrix.
class PcgStepSolver : public StepSolver {
 public:
  PcgStepSolver(const CsrMatrix& A, const std::string& precond, const CmgOptions& cmg, bool eliminate,
                const SolveControl& control);
  SolveResult solve(const std::vector<double>& b, std::vector<double>& x) override;
  std::vector<LevelStats> levels() const override { return M_->levels(); }

 private:
  KeptSystem kept_;
  std::unique_ptr<Preconditioner> M_;
  SolveControl control_;
};

}  // namespace pgsim
