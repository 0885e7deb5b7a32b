#include "dist/coarse_problem.hpp"

#include <spdlog/spdlog.h>

#include <omp.h>

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

// A^T, as transpose() (pcg/triangular.hpp) gives it (each row lists A's rows ascending), for an A
// of few columns (coarse unknowns: thousands) and many rows: each thread counts, then places,
// the entries of one contiguous range of A's rows, after the threads before it in every column.
// Per-thread counts of every column are small only for few columns: else transpose().
CsrMatrix transpose_to_coarse(const CsrMatrix& A, int32_t cols) {
  const int threads = omp_get_max_threads();
  if (int64_t(cols) * threads >= A.nnz()) return transpose(A, cols);
  std::vector<int32_t> at(size_t(threads) * size_t(cols), 0);  // [thread][column]: a count, then where it writes
  CsrMatrix B;
  B.rows = cols;
  size_for_overwrite(B.ptr, size_t(cols) + 1);
  size_for_overwrite(B.col, A.col.size());
  size_for_overwrite(B.val, A.col.size());
  const auto range = [&](int t) {
    return std::pair<int32_t, int32_t>(int32_t(int64_t(A.rows) * t / threads), int32_t(int64_t(A.rows) * (t + 1) / threads));
  };
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    const auto [first, last] = range(t);
    int32_t* mine = &at[size_t(t) * size_t(cols)];
    for (int32_t k = A.ptr[first]; k < A.ptr[last]; ++k) ++mine[A.col[k]];
#pragma omp barrier
#pragma omp single
    {
      int32_t place = 0;
      for (int32_t c = 0; c < cols; ++c) {
        B.ptr[c] = place;
        for (int u = 0; u < threads; ++u) {
          const int32_t n = at[size_t(u) * size_t(cols) + size_t(c)];
          at[size_t(u) * size_t(cols) + size_t(c)] = place;
          place += n;
        }
      }
      B.ptr[cols] = place;
    }
    for (int32_t i = first; i < last; ++i)
      for (int32_t k = A.ptr[i]; k < A.ptr[i + 1]; ++k) {
        const int32_t p = mine[A.col[k]]++;
        B.col[p] = i;
        B.val[p] = A.val[k];
      }
  }
  return B;
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
  CsrMatrix Z;  // this rank's rows of Z: row i holds (unknown_of_row[i], 1) when it has a coarse unknown
  const auto n = static_cast<int32_t>(unknown_of_row_.size());
  Z.rows = n;
  size_for_overwrite(Z.ptr, static_cast<size_t>(n) + 1);
  Z.ptr[0] = 0;
#pragma omp parallel for schedule(static, 65536)
  for (int32_t i = 0; i < n; ++i) Z.ptr[i + 1] = unknown_of_row_[i] >= 0;
  prefix_sum(Z.ptr);
  size_for_overwrite(Z.col, static_cast<size_t>(Z.ptr[n]));
  size_for_overwrite(Z.val, Z.col.size());
#pragma omp parallel for schedule(static, 65536)
  for (int32_t i = 0; i < n; ++i)
    if (unknown_of_row_[i] >= 0) Z.col[Z.ptr[i]] = unknown_of_row_[i], Z.val[Z.ptr[i]] = 1.0;
  return transpose_to_coarse(Z, static_cast<int32_t>(global_count_));
}

CsrMatrix CoarseProblem::gz_transposed() const { return transpose_to_coarse(gz_, static_cast<int32_t>(global_count_)); }

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
