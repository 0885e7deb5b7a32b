#pragma once
// The global coarse problem of the two-level preconditioner (two_level.hpp), built once,
// collectively, and shared by its CPU application and the GPU one (gpu/two_level_device.hpp):
// the coarse unknowns of all ranks numbered rank after rank, this rank's coarse operators
// (coarse_operators.hpp: Z and G Z in the layout both applications read) and the coarse
// matrix E = Z^T G Z, factored on every rank.
//
// Setup (collective): each rank learns the coarse unknowns of its halo rows (one exchange with
// its neighbours), forms its operators and its rows of E = Z^T (G Z) (each own unknown's row on
// its own thread); one MPI_Allgatherv gives every rank all of E, which each factors redundantly
// (sparse Cholesky, AMD order; E is small: at most kMaxCoarseUnknowns, coarse_space.hpp).
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "dist/coarse_operators.hpp"
#include "dist/coarse_space.hpp"
#include "dist/partition.hpp"

namespace pgsim::dist {

// Collective over comm: build_coarse_space at the finest group_level whose coarse unknowns,
// summed over the ranks, are at most max_unknowns (the same level on every rank); `level`, if
// given, receives it. std::length_error on every rank if even the coarsest level is over.
CoarseSpace build_bounded_coarse_space(const RankBlock& block, const CmgHierarchy& h, int layers,
                                       int64_t max_unknowns, MPI_Comm comm, int* level = nullptr);

class CoarseProblem {
 public:
  // Collective over comm: every rank builds one from its own block and coarse space. Throws
  // std::runtime_error if E is not positive definite (not for an SPD G: Z has full column rank).
  CoarseProblem(const RankBlock& block, const CoarseSpace& space, MPI_Comm comm);
  ~CoarseProblem();
  CoarseProblem(CoarseProblem&&) noexcept;

  int64_t unknowns() const { return operators_.unknowns; }  // columns of Z over all ranks
  int64_t factor_nnz() const;                               // entries of E's Cholesky factor
  const CoarseOperators& operators() const { return operators_; }
  // The operators moved out, for a holder that outlives this problem (the GPU's two-level
  // preconditioner, gpu/two_level_device.hpp): at 50M nodes on 2 ranks a copy was 176 MB more at
  // the rank's host memory peak. Only unknowns(), factor_nnz(), counts() and displs() remain.
  CoarseOperators take_operators() { return std::move(operators_); }
  const std::vector<int>& counts() const { return counts_; }  // per rank: its coarse unknowns
  const std::vector<int>& displs() const { return displs_; }  // per rank: its first coarse unknown

  // c = E^{-1} c, c of unknowns() entries. Requires unknowns() > 0.
  void solve(double* c) const;
  // The rows of E^{-1} this rank reads (operators().read, in position order), row-major:
  // positions() x unknowns() entries, on all threads.
  std::vector<double> inverse_rows() const;

 private:
  struct Factor;  // E's Cholesky factor (Eigen), kept out of this header

  CoarseOperators operators_;
  std::vector<int> counts_, displs_;
  std::unique_ptr<Factor> factor_;
};

}  // namespace pgsim::dist
