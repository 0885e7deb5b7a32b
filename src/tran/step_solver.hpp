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
  // x: the previous step's solution on entry (an iterative solver starts from it), this step's on return.
  virtual SolveResult solve(const std::vector<double>& b, std::vector<double>& x) = 0;
  virtual std::vector<LevelStats> levels() const { return {}; }
};

// Sparse Cholesky (CHOLMOD when built with it): one factorisation, two triangular solves per step.
class DirectStepSolver : public StepSolver {
 public:
  explicit DirectStepSolver(const CsrMatrix& A) : factor_(A) {}
  SolveResult solve(const std::vector<double>& b, std::vector<double>& x) override;

 private:
  DirectFactor factor_;
};

// PCG on the CPU, warm-started from the previous step. Wire chains are eliminated once
// (mna/chain_elimination.hpp; each step condenses its b and recovers the chains), and the
// preconditioner (`precond`, e.g. cmg) is built once on the kept matrix.
class PcgStepSolver : public StepSolver {
 public:
  PcgStepSolver(const CsrMatrix& A, const std::string& precond, const CmgOptions& cmg, bool eliminate,
                const SolveControl& control);
  SolveResult solve(const std::vector<double>& b, std::vector<double>& x) override;
  std::vector<LevelStats> levels() const override { return M_->levels(); }

 private:
  std::optional<EliminatedSystem> chains_;
  const CsrMatrix& A_;  // the kept matrix (chains_->G) or the caller's A
  std::unique_ptr<Preconditioner> M_;
  SolveControl control_;
  std::vector<double> rhs_, b_kept_, x_kept_;
};

}  // namespace pgsim
