#include "cmg/coarse_factor.hpp"

#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace pgsim {
namespace {

using SpMat = Eigen::SparseMatrix<double, Eigen::ColMajor, int32_t>;

// The transpose of a CSR matrix, as CSR (columns come out sorted).
CsrMatrix transpose(const CsrMatrix& A) {
  CsrMatrix T;
  T.rows = A.rows;
  T.ptr.assign(static_cast<size_t>(A.rows) + 1, 0);
  for (int32_t c : A.col) ++T.ptr[c + 1];
  for (int32_t i = 0; i < A.rows; ++i) T.ptr[i + 1] += T.ptr[i];
  T.col.resize(A.col.size());
  T.val.resize(A.val.size());
  std::vector<int32_t> next(T.ptr.begin(), T.ptr.end() - 1);
  for (int32_t i = 0; i < A.rows; ++i)
    for (int32_t k = A.ptr[i]; k < A.ptr[i + 1]; ++k) {
      const int32_t at = next[A.col[k]]++;
      T.col[at] = i;
      T.val[at] = A.val[k];
    }
  return T;
}

}  // namespace

CoarseFactor factor_coarsest(const CsrMatrix& A) {
  CoarseFactor f;
  // Ground the vertex with the largest diagonal: its row and column leave the matrix.
  int32_t g = 0;
  double best = -1;
  for (int32_t i = 0; i < A.rows; ++i)
    for (int32_t k = A.ptr[i]; k < A.ptr[i + 1]; ++k)
      if (A.col[k] == i && A.val[k] > best) {
        best = A.val[k];
        g = i;
      }
  f.grounded = g;
  const int32_t m = A.rows - 1;  // unknowns of the grounded system
  if (m <= 0) return f;
  auto reduced = [g](int32_t i) { return i < g ? i : i - 1; };

  std::vector<Eigen::Triplet<double, int32_t>> entries;
  entries.reserve(A.col.size());
  for (int32_t i = 0; i < A.rows; ++i) {
    if (i == g) continue;
    for (int32_t k = A.ptr[i]; k < A.ptr[i + 1]; ++k)
      if (A.col[k] != g && A.col[k] <= i) entries.emplace_back(reduced(i), reduced(A.col[k]), A.val[k]);
  }
  SpMat M(m, m);
  M.setFromTriplets(entries.begin(), entries.end());
  Eigen::SimplicialLLT<SpMat, Eigen::Lower, Eigen::AMDOrdering<int32_t>> llt(M);
  if (llt.info() != Eigen::Success)
    throw std::runtime_error("cmg: the coarsest level (" + std::to_string(A.rows) +
                             " vertices) is not positive definite with one vertex grounded");

  // Row i of L is grounded-system unknown j with P(j) = i.
  f.vertex.resize(static_cast<size_t>(m));
  const auto& perm = llt.permutationP().indices();
  for (int32_t j = 0; j < m; ++j) {
    const int32_t vertex = j < g ? j : j + 1;
    f.vertex[perm[j]] = vertex;
  }
  // Eigen stores L by columns, diagonal first: that is L^T by rows, exactly the layout of Lt.
  const SpMat& L = llt.matrixL().nestedExpression();
  f.Lt.rows = m;
  f.Lt.ptr.assign(L.outerIndexPtr(), L.outerIndexPtr() + m + 1);
  f.Lt.col.assign(L.innerIndexPtr(), L.innerIndexPtr() + L.nonZeros());
  f.Lt.val.assign(L.valuePtr(), L.valuePtr() + L.nonZeros());
  f.L = transpose(f.Lt);
  return f;
}

void solve_coarsest(const CoarseFactor& f, const double* r, double* x, double* y) {
  const int32_t m = f.L.rows;
  for (int32_t i = 0; i < m; ++i) y[i] = r[f.vertex[i]];
  // L y = P r: row i of L ends with its diagonal.
  for (int32_t i = 0; i < m; ++i) {
    double s = y[i];
    const int32_t last = f.L.ptr[i + 1] - 1;
    for (int32_t k = f.L.ptr[i]; k < last; ++k) s -= f.L.val[k] * y[f.L.col[k]];
    y[i] = s / f.L.val[last];
  }
  // L^T y = y: row i of Lt starts with its diagonal.
  for (int32_t i = m; i-- > 0;) {
    double s = y[i];
    const int32_t first = f.Lt.ptr[i];
    for (int32_t k = first + 1; k < f.Lt.ptr[i + 1]; ++k) s -= f.Lt.val[k] * y[f.Lt.col[k]];
    y[i] = s / f.Lt.val[first];
  }
  for (int32_t i = 0; i < m; ++i) x[f.vertex[i]] = y[i];
  x[f.grounded] = 0;
}

}  // namespace pgsim
