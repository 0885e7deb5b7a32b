#include "dist/two_level.hpp"

#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>
#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace pgsim::dist {

struct TwoLevelPreconditioner::Factor {
  Eigen::SimplicialLLT<Eigen::SparseMatrix<double, Eigen::ColMajor, int64_t>, Eigen::Lower,
                       Eigen::AMDOrdering<int64_t>>
      llt;
};

namespace {

constexpr int kCoarseTag = 19;

// Each halo row's value of `own` (one int per local row), from the rank owning it: the
// exchange of the SpMV (halo_backend.hpp), once, for integers.
std::vector<int32_t> halo_values(const RankBlock& block, const std::vector<int32_t>& own, MPI_Comm comm) {
  std::vector<int32_t> halo(static_cast<size_t>(block.halo()));
  std::vector<std::vector<int32_t>> outbox;
  std::vector<MPI_Request> requests;
  for (const Neighbor& nb : block.neighbors) {
    requests.emplace_back();
    MPI_Irecv(halo.data() + nb.recv_first, nb.recv_count, MPI_INT32_T, nb.rank, kCoarseTag, comm, &requests.back());
  }
  outbox.reserve(block.neighbors.size());
  for (const Neighbor& nb : block.neighbors) {
    outbox.emplace_back();
    for (int32_t i : nb.send) outbox.back().push_back(own[i]);
    requests.emplace_back();
    MPI_Isend(outbox.back().data(), static_cast<int>(outbox.back().size()), MPI_INT32_T, nb.rank, kCoarseTag, comm,
              &requests.back());
  }
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  return halo;
}

// Rows of G Z for this rank's rows: row i holds, per coarse unknown c, the sum of G_ij over
// the columns j (own or halo) that belong to c; columns ascending.
CsrMatrix rows_of_gz(const RankBlock& block, const std::vector<int32_t>& own, const std::vector<int32_t>& halo) {
  CsrMatrix gz;
  gz.rows = block.rows();
  gz.ptr.assign(static_cast<size_t>(gz.rows) + 1, 0);
  std::vector<std::pair<int32_t, double>> row;
  size_t next_boundary = 0;
  for (int32_t i = 0; i < gz.rows; ++i) {
    row.clear();
    const CsrMatrix& A = block.interior;
    for (int32_t k = A.ptr[i]; k < A.ptr[i + 1]; ++k)
      if (own[A.col[k]] >= 0) row.emplace_back(own[A.col[k]], A.val[k]);
    if (next_boundary < block.boundary_rows.size() && block.boundary_rows[next_boundary] == i) {
      const CsrMatrix& B = block.boundary;
      const auto kb = static_cast<int32_t>(next_boundary++);
      for (int32_t k = B.ptr[kb]; k < B.ptr[kb + 1]; ++k)
        if (halo[B.col[k]] >= 0) row.emplace_back(halo[B.col[k]], B.val[k]);
    }
    std::sort(row.begin(), row.end());
    for (size_t k = 0; k < row.size(); ++k) {
      if (k > 0 && row[k].first == row[k - 1].first) {
        gz.val.back() += row[k].second;
      } else {
        gz.col.push_back(row[k].first);
        gz.val.push_back(row[k].second);
      }
    }
    gz.ptr[i + 1] = static_cast<int32_t>(gz.col.size());
  }
  return gz;
}

struct Triple {
  int32_t row, col;
  double val;
};

// The lower triangle of this rank's rows of E = Z^T (G Z): per (coarse row, coarse column), the
// sum over the rows i of the coarse row of (G Z)[i][column]; sorted, one entry per pair.
std::vector<Triple> rows_of_e(const std::vector<int32_t>& unknown_of_row, const CsrMatrix& gz) {
  std::vector<Triple> all;
  for (int32_t i = 0; i < gz.rows; ++i) {
    const int32_t u = unknown_of_row[i];
    if (u < 0) continue;
    for (int32_t k = gz.ptr[i]; k < gz.ptr[i + 1]; ++k)
      if (gz.col[k] <= u) all.push_back({u, gz.col[k], gz.val[k]});
  }
  std::sort(all.begin(), all.end(),
            [](const Triple& a, const Triple& b) { return a.row != b.row ? a.row < b.row : a.col < b.col; });
  std::vector<Triple> merged;
  for (const Triple& t : all) {
    if (!merged.empty() && merged.back().row == t.row && merged.back().col == t.col)
      merged.back().val += t.val;
    else
      merged.push_back(t);
  }
  return merged;
}

int to_int(size_t n, const char* what) {
  if (n > size_t(std::numeric_limits<int>::max()))
    throw std::length_error(std::string("coarse correction: ") + what + " beyond 2^31 entries");
  return static_cast<int>(n);
}

}  // namespace

CsrMatrix softened_block(const RankBlock& block, double cut_share) {
  CsrMatrix A = block.interior;
  const CsrMatrix& B = block.boundary;
  for (int32_t k = 0; k < B.rows; ++k) {
    double cut = 0;
    for (int32_t e = B.ptr[k]; e < B.ptr[k + 1]; ++e) cut -= B.val[e];  // off-diagonals are <= 0
    const int32_t i = block.boundary_rows[k];
    for (int32_t e = A.ptr[i]; e < A.ptr[i + 1]; ++e)
      if (A.col[e] == i) A.val[e] -= (1 - cut_share) * cut;
  }
  return A;
}

TwoLevelPreconditioner::TwoLevelPreconditioner(std::unique_ptr<Preconditioner> local, const RankBlock& block,
                                               const CoarseSpace& space, MPI_Comm comm)
    : local_(std::move(local)), comm_(comm), count_(space.count), factor_(std::make_unique<Factor>()) {
  int ranks = 1;
  MPI_Comm_size(comm_, &ranks);
  counts_.resize(static_cast<size_t>(ranks));
  displs_.assign(static_cast<size_t>(ranks), 0);
  MPI_Allgather(&count_, 1, MPI_INT, counts_.data(), 1, MPI_INT, comm_);
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  for (int q = 0; q < ranks; ++q) {
    if (q > 0) displs_[q] = displs_[q - 1] + counts_[q - 1];
    global_count_ += counts_[q];
  }
  to_int(static_cast<size_t>(global_count_), "coarse unknowns");
  first_ = displs_[rank];

  unknown_of_row_ = space.unknown_of_row;
  for (int32_t& u : unknown_of_row_)
    if (u >= 0) u += first_;
  gz_ = rows_of_gz(block, unknown_of_row_, halo_values(block, unknown_of_row_, comm_));

  // This rank's rows of E = Z^T (G Z), lower triangle: row c sums the G Z rows of c's rows,
  // merged here (a rank's rows of G Z repeat each column many times). The ranks' rows of E are
  // disjoint, so all ranks' entries, gathered in rank order, are E exactly: every rank factors
  // the same matrix.
  const std::vector<Triple> merged = rows_of_e(unknown_of_row_, gz_);
  std::vector<int32_t> my_rows, my_cols;
  std::vector<double> my_vals;
  for (const Triple& t : merged) {
    my_rows.push_back(t.row);
    my_cols.push_back(t.col);
    my_vals.push_back(t.val);
  }
  const int mine = to_int(my_rows.size(), "coarse matrix entries of one rank");
  std::vector<int> entries(static_cast<size_t>(ranks)), at(static_cast<size_t>(ranks), 0);
  MPI_Allgather(&mine, 1, MPI_INT, entries.data(), 1, MPI_INT, comm_);
  size_t total = 0;
  for (int q = 0; q < ranks; ++q) {
    at[q] = to_int(total, "coarse matrix entries");
    total += static_cast<size_t>(entries[q]);
  }
  to_int(total, "coarse matrix entries");
  std::vector<int32_t> rows(total), cols(total);
  std::vector<double> vals(total);
  MPI_Allgatherv(my_rows.data(), mine, MPI_INT32_T, rows.data(), entries.data(), at.data(), MPI_INT32_T, comm_);
  MPI_Allgatherv(my_cols.data(), mine, MPI_INT32_T, cols.data(), entries.data(), at.data(), MPI_INT32_T, comm_);
  MPI_Allgatherv(my_vals.data(), mine, MPI_DOUBLE, vals.data(), entries.data(), at.data(), MPI_DOUBLE, comm_);

  own_.resize(static_cast<size_t>(count_));
  c_.resize(static_cast<size_t>(global_count_));
  y1_.resize(static_cast<size_t>(global_count_));
  u_.resize(static_cast<size_t>(block.rows()));
  if (global_count_ == 0) return;  // no coarse unknown anywhere (every row tied to a pad): M alone
  std::vector<Eigen::Triplet<double, int64_t>> lower;
  lower.reserve(total);
  for (size_t k = 0; k < total; ++k) lower.emplace_back(rows[k], cols[k], vals[k]);
  Eigen::SparseMatrix<double, Eigen::ColMajor, int64_t> E(global_count_, global_count_);
  E.setFromTriplets(lower.begin(), lower.end());
  factor_->llt.compute(E);
  if (factor_->llt.info() != Eigen::Success)
    throw std::runtime_error("coarse correction: the coarse matrix (" + std::to_string(global_count_) +
                             " unknowns) is not positive definite");
}

TwoLevelPreconditioner::~TwoLevelPreconditioner() = default;

int64_t TwoLevelPreconditioner::coarse_factor_nnz() const {
  return global_count_ == 0 ? 0 : factor_->llt.matrixL().nestedExpression().nonZeros();
}

void TwoLevelPreconditioner::apply(const double* r, double* z) const {
  if (global_count_ == 0) return local_->apply(r, z);
  const auto n = static_cast<int32_t>(u_.size());
  using Vec = Eigen::Map<Eigen::VectorXd>;
  // y1 = E^{-1} Z^T r: each rank sums its own coarse unknowns' rows, the all-gather joins them.
  std::fill(own_.begin(), own_.end(), 0.0);
  for (int32_t i = 0; i < n; ++i)
    if (unknown_of_row_[i] >= 0) own_[unknown_of_row_[i] - first_] += r[i];
  double t0 = MPI_Wtime();
  MPI_Allgatherv(own_.data(), count_, MPI_DOUBLE, c_.data(), counts_.data(), displs_.data(), MPI_DOUBLE, comm_);
  comm_seconds_ += MPI_Wtime() - t0;
  Vec(y1_.data(), global_count_) = factor_->llt.solve(Vec(c_.data(), global_count_));

  // w = M (r - G Z y1), into z.
  for (int32_t i = 0; i < n; ++i) {
    double s = 0;
    for (int32_t k = gz_.ptr[i]; k < gz_.ptr[i + 1]; ++k) s += gz_.val[k] * y1_[gz_.col[k]];
    u_[i] = r[i] - s;
  }
  local_->apply(u_.data(), z);

  // y2 = E^{-1} (G Z)^T w: a rank's rows reach its neighbours' coarse unknowns too, so the
  // contributions are summed over all ranks.
  std::fill(c_.begin(), c_.end(), 0.0);
  for (int32_t i = 0; i < n; ++i)
    for (int32_t k = gz_.ptr[i]; k < gz_.ptr[i + 1]; ++k) c_[gz_.col[k]] += gz_.val[k] * z[i];
  t0 = MPI_Wtime();
  MPI_Allreduce(MPI_IN_PLACE, c_.data(), static_cast<int>(global_count_), MPI_DOUBLE, MPI_SUM, comm_);
  comm_seconds_ += MPI_Wtime() - t0;
  Vec y(c_.data(), global_count_);
  y = factor_->llt.solve(Vec(c_.data(), global_count_)).eval();

  // z = w + Z (y1 - y2).
  for (int32_t i = 0; i < n; ++i)
    if (unknown_of_row_[i] >= 0) z[i] += y1_[unknown_of_row_[i]] - c_[unknown_of_row_[i]];
}

}  // namespace pgsim::dist
