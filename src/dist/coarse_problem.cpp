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

#include "mna/stopwatch.hpp"
#include "mna/touched_vector.hpp"

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

struct Triple {
  int32_t row, col;
  double val;
};

// The lower triangle of this rank's rows of E = Z^T (G Z), one own unknown per task: row c sums
// the own couplings of c's rows (its diagonal) and, column by column, the rest entries of c's
// rows (the other unknowns its rows reach, in ascending row order); columns ascending.
std::vector<Triple> rows_of_e(const CoarseOperators& op) {
  std::vector<std::vector<int32_t>> rest_of(static_cast<size_t>(op.count));  // per own position: its rest rows
  for (int32_t k = 0; k < op.rest.rows; ++k)
    if (const int32_t p = op.position_of_row[op.rest_rows[k]]; p >= 0) rest_of[p].push_back(k);
  std::vector<std::vector<Triple>> row_of(static_cast<size_t>(op.count));
#pragma omp parallel
  {
    std::vector<double> sum(static_cast<size_t>(op.positions()), 0.0);  // by position
    std::vector<char> seen(sum.size(), 0);
    std::vector<int32_t> touched;
#pragma omp for schedule(dynamic, 8)
    for (int32_t p = 0; p < op.count; ++p) {
      double diagonal = 0;
      for (int32_t k = op.member_ptr[p]; k < op.member_ptr[p + 1]; ++k) diagonal += op.own_coupling[op.members[k]];
      touched.clear();
      for (const int32_t k : rest_of[p])
        for (int32_t e = op.rest.ptr[k]; e < op.rest.ptr[k + 1]; ++e) {
          const int32_t q = op.rest.col[e];
          if (op.read[q] > op.first + p) continue;  // upper triangle
          if (!seen[q]) seen[q] = 1, touched.push_back(q);
          sum[q] += op.rest.val[e];
        }
      std::sort(touched.begin(), touched.end(), [&](int32_t a, int32_t b) { return op.read[a] < op.read[b]; });
      std::vector<Triple>& row = row_of[p];
      for (const int32_t q : touched) row.push_back({op.first + p, op.read[q], sum[q]}), sum[q] = 0, seen[q] = 0;
      row.push_back({op.first + p, op.first + p, diagonal});
    }
  }
  std::vector<Triple> all;
  for (const auto& row : row_of) all.insert(all.end(), row.begin(), row.end());
  return all;
}

int to_int(size_t n, const char* what) {
  if (n > size_t(std::numeric_limits<int>::max()))
    throw std::length_error(std::string("coarse correction: ") + what + " beyond 2^31 entries");
  return static_cast<int>(n);
}

}  // namespace

CoarseSpace build_bounded_coarse_space(const RankBlock& block, const CmgHierarchy& h, int layers,
                                       int64_t max_unknowns, MPI_Comm comm, int* level) {
  return build_coarse_space_at(block, h, layers, [&](std::vector<int64_t> counts) {
    // Ranks' hierarchies differ in depth: a rank's count on a level above its coarsest is its coarsest's.
    int levels = static_cast<int>(counts.size());
    MPI_Allreduce(MPI_IN_PLACE, &levels, 1, MPI_INT, MPI_MAX, comm);
    counts.resize(static_cast<size_t>(levels), counts.back());
    MPI_Allreduce(MPI_IN_PLACE, counts.data(), levels, MPI_INT64_T, MPI_SUM, comm);
    const auto fits = std::find_if(counts.begin(), counts.end(), [&](int64_t c) { return c <= max_unknowns; });
    if (fits == counts.end())
      throw std::length_error("coarse correction: " + std::to_string(counts.back()) +
                              " coarse unknowns even with the rows at the cut grouped by the coarsest CMG level, "
                              "more than the " + std::to_string(max_unknowns) + " allowed");
    const int chosen = static_cast<int>(fits - counts.begin());
    if (level) *level = chosen;
    return chosen;
  });
}

CoarseProblem::CoarseProblem(const RankBlock& block, const CoarseSpace& space, MPI_Comm comm)
    : factor_(std::make_unique<Factor>()) {
  int ranks = 1, rank = 0;
  MPI_Comm_size(comm, &ranks);
  MPI_Comm_rank(comm, &rank);
  counts_.resize(static_cast<size_t>(ranks));
  displs_.assign(static_cast<size_t>(ranks), 0);
  MPI_Allgather(&space.count, 1, MPI_INT, counts_.data(), 1, MPI_INT, comm);
  int64_t global_count = 0;
  for (int q = 0; q < ranks; ++q) {
    if (q > 0) displs_[q] = displs_[q - 1] + counts_[q - 1];
    global_count += counts_[q];
  }
  const int32_t N = to_int(static_cast<size_t>(global_count), "coarse unknowns");
  const int32_t first = displs_[rank];

  Stopwatch watch;  // -v: the steps' times, logged by rank 0
  std::vector<int32_t> unknown_of_row = space.unknown_of_row;
#pragma omp parallel for schedule(static, 65536)
  for (std::ptrdiff_t i = 0; i < std::ptrdiff_t(unknown_of_row.size()); ++i)
    if (unknown_of_row[size_t(i)] >= 0) unknown_of_row[size_t(i)] += first;
  const std::vector<int32_t> halo = halo_values(block, unknown_of_row, comm);
  operators_ = build_coarse_operators(block, unknown_of_row, halo, first, space.count, N);
  const double operators_seconds = watch.lap();

  // This rank's rows of E = Z^T (G Z), lower triangle. The ranks' rows of E are disjoint, so all
  // ranks' entries, gathered in rank order, are E exactly: every rank factors the same matrix.
  const std::vector<Triple> merged = rows_of_e(operators_);
  const double e_seconds = watch.lap();
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
  const double gather_seconds = watch.lap();  // with the wait for the slowest rank's rows
  const auto log = [&](double factor_seconds) {
    if (rank == 0)
      spdlog::debug("coarse problem on rank 0: operators {:.3f} s ({} rows, {} in a coarse unknown, {} reaching "
                    "other unknowns with {} entries, {} positions; {} bytes), E's rows {:.3f} s, gathered {:.3f} s "
                    "({} entries; waits for the slowest rank), factor {:.3f} s",
                    operators_seconds, operators_.rows(), operators_.members.size(), operators_.rest.rows,
                    operators_.rest.nnz(), operators_.positions(), operators_.bytes(), e_seconds, gather_seconds,
                    total, factor_seconds);
  };

  if (N == 0) {  // no coarse unknown anywhere (every row tied to a pad)
    log(0.0);
    return;
  }
  std::vector<Eigen::Triplet<double, int64_t>> lower;
  lower.reserve(total);
  for (size_t k = 0; k < total; ++k) lower.emplace_back(rows[k], cols[k], vals[k]);
  Eigen::SparseMatrix<double, Eigen::ColMajor, int64_t> E(N, N);
  E.setFromTriplets(lower.begin(), lower.end());
  factor_->llt.compute(E);
  if (factor_->llt.info() != Eigen::Success)
    throw std::runtime_error("coarse correction: the coarse matrix (" + std::to_string(N) +
                             " unknowns) is not positive definite");
  log(watch.lap());
}

CoarseProblem::~CoarseProblem() = default;
CoarseProblem::CoarseProblem(CoarseProblem&&) noexcept = default;

int64_t CoarseProblem::factor_nnz() const {
  return unknowns() == 0 ? 0 : factor_->llt.matrixL().nestedExpression().nonZeros();
}

void CoarseProblem::solve(double* c) const {
  Eigen::Map<Eigen::VectorXd> v(c, unknowns());
  v = factor_->llt.solve(v).eval();
}

std::vector<double> CoarseProblem::inverse_rows() const {
  const int64_t N = unknowns(), m = operators_.positions();
  // Hundreds of MB (positions x N_c, both near kMaxCoarseUnknowns): a plain vector's zero fill
  // would fault in every page on this thread alone, most of this function's time.
  std::vector<double> rows;
  size_for_overwrite(rows, static_cast<size_t>(m * N));
  // Row read[p] of the symmetric E^{-1} is its column read[p]: column p of this N x m column-major map.
  Eigen::Map<Eigen::MatrixXd> all(rows.data(), N, m);
  // Column blocks on all threads (the factor is only read), each thread's unit columns zeroed
  // once and reset after each block rather than allocated and zero-filled per block.
  constexpr int64_t kColumns = 64;
  const int64_t blocks = (m + kColumns - 1) / kColumns;
#pragma omp parallel
  {
    Eigen::MatrixXd unit = Eigen::MatrixXd::Zero(N, std::min(kColumns, m));
#pragma omp for schedule(dynamic, 1)
    for (int64_t blk = 0; blk < blocks; ++blk) {
      const int64_t first = blk * kColumns, width = std::min(kColumns, m - first);
      for (int64_t j = 0; j < width; ++j) unit(operators_.read[first + j], j) = 1;
      all.middleCols(first, width) = factor_->llt.solve(unit.leftCols(width));
      for (int64_t j = 0; j < width; ++j) unit(operators_.read[first + j], j) = 0;
    }
  }
  return rows;
}

}  // namespace pgsim::dist
