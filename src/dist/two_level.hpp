#pragma once
// The distributed preconditioner with a global coarse correction: each rank's own block
// preconditioner M (block CMG, block Jacobi across ranks) combined with an exact solve on the
// coarse space Z of dist/coarse_space.hpp, in the balancing (BNN) form
//
//   B = (I - Q G) M (I - G Q) + Q,   Q = Z E^{-1} Z^T,   E = Z^T G Z,
//
// symmetric, and positive definite for any SPD M and any Z of full column rank (x^T B x is
// ||M^{1/2} (I - G Q) x||^2 + x^T Q x, and where Q x = 0 the first term is x^T M x > 0): a
// fixed SPD operator, so PCG stays valid. It is the two-level multigrid cycle "coarse solve,
// M, coarse solve"; the additive form M + Q, which needs one collective fewer, took more
// iterations than block CMG alone in the measurements of docs/distributed.md.
//
// Setup (collective): the coarse problem, E factored on every rank (coarse_problem.hpp).
//
// M is built on the rank's diagonal block with its cut couplings only partly kept on the
// diagonal (softened_block_hierarchy below): with all of them, the block treats the other ranks' rows
// as grounded, a Dirichlet condition at the cut that the coarse space must then undo; with a
// quarter, the rows at the cut float more freely and their values come mostly from the coarse
// solve, in which they are unknowns of their own. Measured in docs/distributed.md: on the
// 1M-node generated grid at 8 ranks, 72 -> 33 iterations at a smaller coarse system.
//
// One application z = B r (collective), with y = E^{-1} c solved on every rank, the operators
// in coarse_operators.hpp's layout (the GPU path's steps, gpu/two_level_device.hpp):
//   y1 = E^{-1} Z^T r          Z^T r: own coarse unknowns only, one MPI_Allgatherv
//   w  = M (r - (G Z) y1)      local (y1 read at this rank's positions)
//   y2 = E^{-1} (G Z)^T w      contributions to any coarse unknown, one MPI_Allreduce
//   z  = w + Z (y1 - y2)
#include <mpi.h>

#include <functional>
#include <memory>
#include <vector>

#include "cmg/builder.hpp"
#include "dist/coarse_problem.hpp"
#include "dist/coarse_space.hpp"
#include "dist/partition.hpp"
#include "mna/csr.hpp"
#include "pcg/preconditioner.hpp"

namespace pgsim::dist {

// The share of a row's couplings to other ranks that softened_block_hierarchy keeps on its diagonal.
inline constexpr double kCutDiagonalShare = 0.25;

// The CMG hierarchy of block.interior softened: each boundary row's diagonal lowered by
// (1 - cut_share) times the sum of its couplings to other ranks. Still SDD and nonsingular for
// cut_share > 0: every connected piece of the block either touches the cut (keeping cut_share of
// those couplings as excess) or is a whole component of G, with its pads. The block is softened
// in place for the build and its diagonals put back, bit for bit, after it (a throw included):
// no copy of the block beside the build (12 B per entry: 0.6 GB per rank at 50M nodes, P = 2,
// at the rank's peak host memory).
CmgHierarchy softened_block_hierarchy(RankBlock& block, double cut_share, const CmgOptions& options = {});
// build(block.interior) with the block softened so (its diagonals put back after, a throw
// included): for a hierarchy built elsewhere (the rank's GPU, gpu/device_hierarchy.hpp).
void with_softened_block(RankBlock& block, double cut_share, const std::function<void(const CsrMatrix&)>& build);

class TwoLevelPreconditioner : public Preconditioner {
 public:
  // Collective over comm: every rank builds one from its own block, its block preconditioner
  // and its coarse space. `block` must outlive the preconditioner. Throws std::runtime_error
  // if E is not positive definite (not for an SPD G: Z has full column rank).
  TwoLevelPreconditioner(std::unique_ptr<Preconditioner> local, const RankBlock& block, const CoarseSpace& space,
                         MPI_Comm comm);

  void apply(const double* r, double* z) const override;
  std::string name() const override { return local_->name(); }
  std::vector<LevelStats> levels() const override { return local_->levels(); }

  int64_t coarse_unknowns() const { return coarse_.unknowns(); }      // columns of Z over all ranks
  int64_t coarse_factor_nnz() const { return coarse_.factor_nnz(); }  // entries of E's Cholesky factor
  // Seconds spent waiting in the two collectives, over all applications so far.
  double communication_seconds() const { return comm_seconds_; }

 private:
  std::unique_ptr<Preconditioner> local_;
  MPI_Comm comm_;
  CoarseProblem coarse_;
  mutable std::vector<double> own_, c_, y1_, u_;  // y1_: by position
  mutable double comm_seconds_ = 0;
};

}  // namespace pgsim::dist
