#include "cmg/cmg_preconditioner.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <utility>

#include "cmg/coarse_factor.hpp"
#include "mna/fixed_order_sum.hpp"

namespace pgsim {
namespace {

// Below this many rows a level's loops run on one thread: fork/join would cost more than the work.
// On the H100 machine's 15 threads ibmpg1's solve (levels of 15,378, 6,214 and 1,677 rows) took
// 19.7 ms with 20,000 here, 14.3 with 8,000, 12.9 with 4,000 and 14.5 with 1,000 (f6d28bb,
// medians of 9).
constexpr int32_t kParallelRows = 4096;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// (b - A x) at row i.
inline double residual(const CsrMatrix& A, const double* b, const double* x, int32_t i) {
  double s = b[i];
  for (int32_t k = A.ptr[i]; k < A.ptr[i + 1]; ++k) s -= A.val[k] * x[A.col[k]];
  return s;
}

}  // namespace

CmgPreconditioner::CmgPreconditioner(CmgHierarchy hierarchy) : h_(std::move(hierarchy)) {
  const size_t levels = h_.levels.size();
  b_.resize(levels);
  x_.resize(levels);
  w_.resize(levels);
  seconds_.assign(levels, 0.0);
  for (size_t l = 0; l < levels; ++l) {
    const size_t n = static_cast<size_t>(h_.levels[l].A.rows);
    b_[l].assign(n, 0.0);
    x_[l].assign(n, 0.0);
    w_[l].assign(l + 1 == levels ? static_cast<size_t>(h_.coarse.L.rows) : n, 0.0);
  }
}

CmgPreconditioner::CmgPreconditioner(const CsrMatrix& G, const CmgOptions& options)
    : CmgPreconditioner(build_cmg_hierarchy(G, options)) {}

void CmgPreconditioner::apply(const double* r, double* z) const {
  const int32_t n = h_.n;
  double* b0 = b_[0].data();
  // One pass scatters r into level 0 and sums it for the ground row.
  const int32_t* to = h_.level0_of_unknown.data();
  b0[h_.level0_ground] = -fixed_order_sum(n, [r, b0, to](int64_t i) {
    b0[to[i]] = r[i];
    return r[i];
  });
  cycle(0);
  const double* x0 = x_[0].data();
  const double ground = x0[h_.level0_ground];
#pragma omp parallel for if (n > kParallelRows)
  for (int32_t i = 0; i < n; ++i) z[i] = x0[h_.level0_of_unknown[i]] - ground;
}

void CmgPreconditioner::cycle(size_t l) const {
  const auto start = Clock::now();
  if (l + 1 == h_.levels.size()) {
    solve_coarsest(h_.coarse, b_[l].data(), x_[l].data(), w_[l].data());
    seconds_[l] += seconds_since(start);
    return;
  }
  if (h_.smoother == CmgSmoother::sgs)
    sgs_cycle(l, start);
  else
    jacobi_cycle(l, start);
}

void CmgPreconditioner::child_cycle(size_t l, Clock::time_point& start) const {
  seconds_[l] += seconds_since(start);
  cycle(l + 1);
  start = Clock::now();
}

void CmgPreconditioner::jacobi_cycle(size_t l, Clock::time_point start) const {
  const CmgLevel& level = h_.levels[l];
  const CsrMatrix& A = level.A;
  const int32_t n = A.rows;
  const bool parallel = n > kParallelRows;
  const double* b = b_[l].data();
  const double* inv_diag = level.inv_diag.data();

  double* x = x_[l].data();
#pragma omp parallel for if (parallel)
  for (int32_t i = 0; i < n; ++i) x[i] = inv_diag[i] * b[i];
  double* y = w_[l].data();
  for (int rep = 0; rep < level.repeats; ++rep) {
    restrict_residual(l);
    child_cycle(l, start);
    prolong(l, y);
    // Damped Jacobi of y, weighted with x (hierarchy.hpp): x_i only at i, so in place.
    const double w = level.weights.empty() ? 1.0 : level.weights[static_cast<size_t>(rep)];
#pragma omp parallel for schedule(static, 4096) if (parallel)
    for (int32_t i = 0; i < n; ++i) x[i] = (1 - w) * x[i] + w * (y[i] + inv_diag[i] * residual(A, b, y, i));
  }
  seconds_[l] += seconds_since(start);
}

void CmgPreconditioner::sgs_cycle(size_t l, Clock::time_point start) const {
  const CmgLevel& level = h_.levels[l];
  const int32_t colors = static_cast<int32_t>(level.color_ptr.size()) - 1;
  std::fill(x_[l].begin(), x_[l].end(), 0.0);
  for (int rep = 0; rep < level.repeats; ++rep) {
    for (int32_t c = 0; c < colors; ++c) gauss_seidel_color(l, c);
    restrict_residual(l);
    child_cycle(l, start);
    prolong(l, x_[l].data());
    for (int32_t c = colors; c-- > 0;) gauss_seidel_color(l, c);
  }
  seconds_[l] += seconds_since(start);
}

void CmgPreconditioner::restrict_residual(size_t l) const {
  const CmgLevel& level = h_.levels[l];
  const CsrMatrix& A = level.A;
  const int32_t clusters = static_cast<int32_t>(level.cluster_ptr.size()) - 1;
  const int32_t* cptr = level.cluster_ptr.data();
  const double* b = b_[l].data();
  const double* x = x_[l].data();
  double* bc = b_[l + 1].data();
  // The child's right-hand side is each cluster's sum of (b - A x).
#pragma omp parallel for schedule(static, 1024) if (A.rows > kParallelRows)
  for (int32_t c = 0; c < clusters; ++c) {
    double s = 0;
    for (int32_t i = cptr[c]; i < cptr[c + 1]; ++i) s += residual(A, b, x, i);
    bc[c] = s;
  }
}

void CmgPreconditioner::prolong(size_t l, double* out) const {
  const CmgLevel& level = h_.levels[l];
  const int32_t clusters = static_cast<int32_t>(level.cluster_ptr.size()) - 1;
  const int32_t* cptr = level.cluster_ptr.data();
  const double* xc = x_[l + 1].data();
  const double* x = x_[l].data();
  // A cluster's correction to each of its vertices.
#pragma omp parallel for schedule(static, 1024) if (level.A.rows > kParallelRows)
  for (int32_t c = 0; c < clusters; ++c)
    for (int32_t i = cptr[c]; i < cptr[c + 1]; ++i) out[i] = x[i] + xc[c];
}

void CmgPreconditioner::gauss_seidel_color(size_t l, int32_t color) const {
  const CmgLevel& level = h_.levels[l];
  const CsrMatrix& A = level.A;
  const int32_t* rows = level.color_rows.data() + level.color_ptr[static_cast<size_t>(color)];
  const int32_t count = level.color_ptr[static_cast<size_t>(color) + 1] - level.color_ptr[static_cast<size_t>(color)];
  const double* b = b_[l].data();
  const double* inv_diag = level.inv_diag.data();
  double* x = x_[l].data();
  // The rows of one colour are not adjacent: each reads only other colours' values (and its own).
  // Threaded by the level's size, like its other loops: a colour holds only 1/6 to 1/7 of the rows
  // of a grid's level, and a level's sweeps are most of its work.
#pragma omp parallel for schedule(static, 256) if (A.rows > kParallelRows)
  for (int32_t k = 0; k < count; ++k) {
    const int32_t i = rows[k];
    x[i] += 2 * inv_diag[i] * residual(A, b, x, i);
  }
}

std::vector<LevelStats> CmgPreconditioner::levels() const {
  std::vector<LevelStats> stats(h_.levels.size());
  double visits = 1;
  for (size_t l = 0; l < h_.levels.size(); ++l) {
    stats[l].rows = h_.levels[l].A.rows;
    stats[l].nnz = h_.levels[l].A.nnz();
    stats[l].repeats = h_.levels[l].repeats;
    stats[l].visits = visits;
    stats[l].seconds = seconds_[l];
    visits *= h_.levels[l].repeats;
  }
  return stats;
}

}  // namespace pgsim
