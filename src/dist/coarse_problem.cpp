#include "dist/coarse_problem.hpp"

#include <spdlog/spdlog.h>

#include <Eigen/Dense>
#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>
#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "mna/prefix_sum.hpp"
#include "mna/stopwatch.hpp"
#include "mna/touched_vector.hpp"
#include "pcg/triangular.hpp"

namespace pgsim::dist {

struct CoarseProblem::Factor {
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
// the columns j (own or halo) that belong to c; columns ascending. Rows on all threads, in two
// passes (lengths, then entries), each row summed as one thread would.
CsrMatrix rows_of_gz(const RankBlock& block, const std::vector<int32_t>& own, const std::vector<int32_t>& halo) {
  const CsrMatrix& A = block.interior;
  const CsrMatrix& B = block.boundary;
  CsrMatrix gz;
  gz.rows = block.rows();
  // Row i's (coarse unknown, G_ij) pairs, sorted (by unknown, then value: the order they are summed in).
  const auto gather = [&](int32_t i, std::vector<std::pair<int32_t, double>>& row) {
    row.clear();
    for (int32_t k = A.ptr[i]; k < A.ptr[i + 1]; ++k)
      if (own[A.col[k]] >= 0) row.emplace_back(own[A.col[k]], A.val[k]);
    const auto at = std::lower_bound(block.boundary_rows.begin(), block.boundary_rows.end(), i);
    if (at != block.boundary_rows.end() && *at == i) {
      const auto kb = static_cast<int32_t>(at - block.boundary_rows.begin());
      for (int32_t k = B.ptr[kb]; k < B.ptr[kb + 1]; ++k)
        if (halo[B.col[k]] >= 0) row.emplace_back(halo[B.col[k]], B.val[k]);
    }
    std::sort(row.begin(), row.end());
  };
  size_for_overwrite(gz.ptr, static_cast<size_t>(gz.rows) + 1);
  gz.ptr[0] = 0;
#pragma omp parallel
  {
    std::vector<std::pair<int32_t, double>> row;
#pragma omp for schedule(static, 4096)
    for (int32_t i = 0; i < gz.rows; ++i) {
      gather(i, row);
      int32_t distinct = 0;
      for (size_t k = 0; k < row.size(); ++k) distinct += k == 0 || row[k].first != row[k - 1].first;
      gz.ptr[i + 1] = distinct;
    }
  }
  prefix_sum(gz.ptr);
  size_for_overwrite(gz.col, static_cast<size_t>(gz.ptr[gz.rows]));
  size_for_overwrite(gz.val, gz.col.size());
#pragma omp parallel
  {
    std::vector<std::pair<int32_t, double>> row;
#pragma omp for schedule(static, 4096)
    for (int32_t i = 0; i < gz.rows; ++i) {
      gather(i, row);
      int32_t at = gz.ptr[i] - 1;
      for (size_t k = 0; k < row.size(); ++k) {
        if (k > 0 && row[k].first == row[k - 1].first) {
          gz.val[at] += row[k].second;
        } else {
          gz.col[++at] = row[k].first;
          gz.val[at] = row[k].second;
        }
      }
    }
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

CoarseProblem::CoarseProblem(const RankBlock& block, const CoarseSpace& space, MPI_Comm comm)
    : count_(space.count), factor_(std::make_unique<Factor>()) {
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  counts_.resize(static_cast<size_t>(ranks));
  displs_.assign(static_cast<size_t>(ranks), 0);
  MPI_Allgather(&count_, 1, MPI_INT, counts_.data(), 1, MPI_INT, comm);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  for (int q = 0; q < ranks; ++q) {
    if (q > 0) displs_[q] = displs_[q - 1] + counts_[q - 1];
    global_count_ += counts_[q];
  }
  to_int(static_cast<size_t>(global_count_), "coarse unknowns");
  first_ = displs_[rank];

  Stopwatch watch;  // -v: the steps' times, logged by rank 0
  unknown_of_row_ = space.unknown_of_row;
  for (int32_t& u : unknown_of_row_)
    if (u >= 0) u += first_;
  gz_ = rows_of_gz(block, unknown_of_row_, halo_values(block, unknown_of_row_, comm));
  const double gz_seconds = watch.lap();

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
  MPI_Allgather(&mine, 1, MPI_INT, entries.data(), 1, MPI_INT, comm);
  size_t total = 0;
  for (int q = 0; q < ranks; ++q) {
    at[q] = to_int(total, "coarse matrix entries");
    total += static_cast<size_t>(entries[q]);
  }
  to_int(total, "coarse matrix entries");
  std::vector<int32_t> rows(total), cols(total);
  std::vector<double> vals(total);
  MPI_Allgatherv(my_rows.data(), mine, MPI_INT32_T, rows.data(), entries.data(), at.data(), MPI_INT32_T, comm);
  MPI_Allgatherv(my_cols.data(), mine, MPI_INT32_T, cols.data(), entries.data(), at.data(), MPI_INT32_T, comm);
  MPI_Allgatherv(my_vals.data(), mine, MPI_DOUBLE, vals.data(), entries.data(), at.data(), MPI_DOUBLE, comm);
  const double e_seconds = watch.lap();
  const auto log = [&](double factor_seconds) {
    if (rank == 0)
      spdlog::debug("coarse problem on rank 0: rows of G Z {:.3f} s, E's rows and gather {:.3f} s ({} entries), factor {:.3f} s",
                    gz_seconds, e_seconds, total, factor_seconds);
  };

  if (global_count_ == 0) {  // no coarse unknown anywhere (every row tied to a pad)
    log(0.0);
    return;
  }
  std::vector<Eigen::Triplet<double, int64_t>> lower;
  lower.reserve(total);
  for (size_t k = 0; k < total; ++k) lower.emplace_back(rows[k], cols[k], vals[k]);
  Eigen::SparseMatrix<double, Eigen::ColMajor, int64_t> E(global_count_, global_count_);
  E.setFromTriplets(lower.begin(), lower.end());
  factor_->llt.compute(E);
  if (factor_->llt.info() != Eigen::Success)
    throw std::runtime_error("coarse correction: the coarse matrix (" + std::to_string(global_count_) +
                             " unknowns) is not positive definite");
  log(watch.lap());
}

CoarseProblem::~CoarseProblem() = default;
CoarseProblem::CoarseProblem(CoarseProblem&&) noexcept = default;

int64_t CoarseProblem::factor_nnz() const {
  return global_count_ == 0 ? 0 : factor_->llt.matrixL().nestedExpression().nonZeros();
}

CsrMatrix CoarseProblem::z_transposed() const {
  CsrMatrix Z;  // this rank's rows of Z; ptr starts as {0}
  Z.rows = static_cast<int32_t>(unknown_of_row_.size());
  for (int32_t c : unknown_of_row_) {
    if (c >= 0) {
      Z.col.push_back(c);
      Z.val.push_back(1.0);
    }
    Z.ptr.push_back(static_cast<int32_t>(Z.col.size()));
  }
  return transpose(Z, static_cast<int32_t>(global_count_));
}

CsrMatrix CoarseProblem::gz_transposed() const { return transpose(gz_, static_cast<int32_t>(global_count_)); }

void CoarseProblem::solve(double* c) const {
  Eigen::Map<Eigen::VectorXd> v(c, global_count_);
  v = factor_->llt.solve(v).eval();
}

std::vector<double> CoarseProblem::dense_inverse(int64_t max_unknowns) const {
  if (global_count_ > max_unknowns)
    throw std::length_error("coarse correction: " + std::to_string(global_count_) +
                            " coarse unknowns, more than the " + std::to_string(max_unknowns) +
                            " whose dense inverse is kept");
  std::vector<double> inverse(static_cast<size_t>(global_count_ * global_count_));
  Eigen::Map<Eigen::MatrixXd> all(inverse.data(), global_count_, global_count_);
  // Column blocks on all threads (the factor is only read): thousands of sparse solves.
  constexpr int64_t kColumns = 64;
  const int64_t blocks = (global_count_ + kColumns - 1) / kColumns;
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int64_t first = blk * kColumns, width = std::min(kColumns, global_count_ - first);
    all.middleCols(first, width) = factor_->llt.solve(Eigen::MatrixXd::Identity(global_count_, global_count_).middleCols(first, width));
  }
  return inverse;
}

}  // namespace pgsim::dist
