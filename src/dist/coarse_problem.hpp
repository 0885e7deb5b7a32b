#pragma once
// The global coarse problem of the two-level preconditioner (two_level.hpp), built once,
// collectively, and shared by its CPU application and the GPU one (gpu/two_level_device.hpp):
// the coarse unknowns of all ranks numbered rank after rank, this rank's rows of G Z and the
// coarse matrix E = Z^T G Z, factored on every rank.
//
// Setup (collective): each rank learns the coarse unknowns of its halo rows (one exchange with
// its neighbours), forms its rows of G Z (columns: global coarse unknowns, its own and its
// neighbours') and its rows of E = Z^T (G Z); one MPI_Allgatherv gives every rank all of E,
// which each factors redundantly (sparse Cholesky, AMD order; E is small: the coarse unknowns
// of all ranks).
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "dist/coarse_space.hpp"
#include "dist/partition.hpp"
#include "mna/csr.hpp"

namespace pgsim::dist {

class CoarseProblem {
 public:
  // Collective over comm: every rank builds one from its own block and coarse space. Throws
  // std::runtime_error if E is not positive definite (not for an SPD G: Z has full column rank).
  CoarseProblem(const RankBlock& block, const CoarseSpace& space, MPI_Comm comm);
  ~CoarseProblem();
  CoarseProblem(CoarseProblem&&) noexcept;

  int64_t unknowns() const { return global_count_; }  // columns of Z over all ranks
  int64_t factor_nnz() const;                         // entries of E's Cholesky factor
  // Per local row: its global coarse unknown, or -1. This rank's are [first(), first() + count()).
  const std::vector<int32_t>& unknown_of_row() const { return unknown_of_row_; }
  int32_t first() const { return first_; }
  int32_t count() const { return count_; }
  const std::vector<int>& counts() const { return counts_; }  // per rank: its coarse unknowns
  const std::vector<int>& displs() const { return displs_; }  // per rank: its first coarse unknown
  const CsrMatrix& gz() const { return gz_; }  // local rows of G Z, columns global coarse unknowns
  // The same operators as matrices over all coarse unknowns (unknowns() rows, columns local
  // rows), for an application by SpMV (gpu/two_level_device.hpp): Z^T (row c lists this rank's
  // rows of coarse unknown c, values 1; the other ranks' unknowns are empty rows) and (G Z)^T.
  CsrMatrix z_transposed() const;
  CsrMatrix gz_transposed() const;

  // c = E^{-1} c, c of unknowns() entries. Requires unknowns() > 0.
  void solve(double* c) const;
  // E^{-1} dense, unknowns()^2 entries (symmetric: row- and column-major alike). std::length_error
  // beyond max_unknowns.
  std::vector<double> dense_inverse(int64_t max_unknowns) const;

 private:
  struct Factor;  // E's Cholesky factor (Eigen), kept out of this header

  std::vector<int32_t> unknown_of_row_;
  int32_t first_ = 0, count_ = 0;
  int64_t global_count_ = 0;
  std::vector<int> counts_, displs_;
  CsrMatrix gz_;
  std::unique_ptr<Factor> factor_;
};

}  // namespace pgsim::dist
