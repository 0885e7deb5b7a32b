#include "dist/two_level.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "dist/coarse_operators.hpp"

namespace pgsim::dist {

namespace {

// Boundary rows' diagonals lowered in place while it lives, their values before put back after.
class SoftenedInPlace {
 public:
  SoftenedInPlace(RankBlock& block, double cut_share) : A_(block.interior) {
    const CsrMatrix& B = block.boundary;
    for (int32_t k = 0; k < B.rows; ++k) {
      double cut = 0;
      for (int32_t e = B.ptr[k]; e < B.ptr[k + 1]; ++e) cut -= B.val[e];  // off-diagonals are <= 0
      const int32_t i = block.boundary_rows[k];
      for (int32_t e = A_.ptr[i]; e < A_.ptr[i + 1]; ++e)
        if (A_.col[e] == i) {
          saved_.emplace_back(e, A_.val[e]);
          A_.val[e] -= (1 - cut_share) * cut;
        }
    }
  }
  ~SoftenedInPlace() {
    for (const auto& [e, value] : saved_) A_.val[e] = value;
  }
  SoftenedInPlace(const SoftenedInPlace&) = delete;
  SoftenedInPlace& operator=(const SoftenedInPlace&) = delete;

 private:
  CsrMatrix& A_;
  std::vector<std::pair<int32_t, double>> saved_;  // a diagonal entry and its value before
};

}  // namespace

CmgHierarchy softened_block_hierarchy(RankBlock& block, double cut_share, const CmgOptions& options) {
  CmgHierarchy h;
  with_softened_block(block, cut_share, [&](const CsrMatrix& A) { h = build_cmg_hierarchy(A, options); });
  return h;
}

void with_softened_block(RankBlock& block, double cut_share, const std::function<void(const CsrMatrix&)>& build) {
  const SoftenedInPlace softened(block, cut_share);
  build(block.interior);
}

TwoLevelPreconditioner::TwoLevelPreconditioner(std::unique_ptr<Preconditioner> local, const RankBlock& block,
                                               const CoarseSpace& space, MPI_Comm comm)
    : local_(std::move(local)),
      comm_(comm),
      coarse_(block, space, comm),
      own_(static_cast<size_t>(coarse_.operators().count)),
      c_(static_cast<size_t>(coarse_.unknowns())),
      y1_(static_cast<size_t>(coarse_.operators().positions())),
      u_(static_cast<size_t>(block.rows())) {}

void TwoLevelPreconditioner::apply(const double* r, double* z) const {
  if (coarse_.unknowns() == 0) return local_->apply(r, z);
  const CoarseOperators& op = coarse_.operators();
  // y1 = E^{-1} Z^T r: each rank sums its own coarse unknowns' rows, the all-gather joins them;
  // this rank reads y1 at its positions.
  own_sums(op, r, false, own_.data());
  double t0 = MPI_Wtime();
  MPI_Allgatherv(own_.data(), op.count, MPI_DOUBLE, c_.data(), coarse_.counts().data(), coarse_.displs().data(),
                 MPI_DOUBLE, comm_);
  comm_seconds_ += MPI_Wtime() - t0;
  coarse_.solve(c_.data());
  for (int32_t p = 0; p < op.positions(); ++p) y1_[p] = c_[op.read[p]];

  // w = M (r - G Z y1), into z.
  subtract_gz(op, r, y1_.data(), u_.data());
  local_->apply(u_.data(), z);

  // y2 = E^{-1} (G Z)^T w: a rank's rows reach its neighbours' coarse unknowns too, so the
  // contributions are summed over all ranks.
  gz_transposed_times(op, z, c_.data());
  t0 = MPI_Wtime();
  MPI_Allreduce(MPI_IN_PLACE, c_.data(), static_cast<int>(coarse_.unknowns()), MPI_DOUBLE, MPI_SUM, comm_);
  comm_seconds_ += MPI_Wtime() - t0;
  coarse_.solve(c_.data());

  // z = w + Z (y1 - y2); this rank's y2 are its own unknowns, c_[first ...].
  add_coarse(op, y1_.data(), c_.data() + op.first, z);
}

}  // namespace pgsim::dist
