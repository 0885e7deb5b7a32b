#include "pcg/ic0.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "pcg/triangular.hpp"

namespace pgsim {
namespace {

// The lower triangle of G with the diagonal (last in each row, columns being sorted).
CsrMatrix lower_pattern(const CsrMatrix& G) {
  CsrMatrix L;
  L.rows = G.rows;
  L.ptr.assign(static_cast<size_t>(G.rows) + 1, 0);
  for (int32_t i = 0; i < G.rows; ++i) {
    for (int32_t k = G.ptr[i]; k < G.ptr[i + 1] && G.col[k] <= i; ++k) {
      L.col.push_back(G.col[k]);
      L.val.push_back(G.val[k]);
    }
    if (L.col.empty() || L.col.back() != i)
      throw std::domain_error("IC(0): row " + std::to_string(i) + " stores no diagonal");
    L.ptr[i + 1] = static_cast<int32_t>(L.col.size());
  }
  return L;
}

}  // namespace

Ic0Factor ic0_factor(const CsrMatrix& G) {
  Ic0Factor f;
  CsrMatrix& L = f.L;
  L = lower_pattern(G);
  // Up-looking, row by row: L(i,k) = (G(i,k) - sum_{j<k} L(i,j) L(k,j)) / L(k,k) for the stored
  // k < i in ascending order, then L(i,i) = sqrt(G(i,i) - sum_{j<i} L(i,j)^2). Rows i and k are
  // both sorted, so each inner sum is a merge of the two rows.
  for (int32_t i = 0; i < L.rows; ++i) {
    const int32_t begin = L.ptr[i], diag = L.ptr[i + 1] - 1;
    for (int32_t p = begin; p < diag; ++p) {
      const int32_t k = L.col[p];
      double s = L.val[p];
      int32_t a = begin, b = L.ptr[k];
      const int32_t b_end = L.ptr[k + 1] - 1;  // row k without its diagonal
      while (a < p && b < b_end) {
        if (L.col[a] < L.col[b]) ++a;
        else if (L.col[a] > L.col[b]) ++b;
        else s -= L.val[a++] * L.val[b++];
      }
      L.val[p] = s / L.val[b_end];
    }
    double d = L.val[diag];
    for (int32_t p = begin; p < diag; ++p) d -= L.val[p] * L.val[p];
    if (!(d > 0)) throw std::domain_error("IC(0): pivot " + std::to_string(d) + " at row " + std::to_string(i) + " is not positive");
    L.val[diag] = std::sqrt(d);
  }
  f.Lt = transpose(L);
  return f;
}

Ic0Preconditioner::Ic0Preconditioner(const CsrMatrix& G) : f_(ic0_factor(G)), y_(static_cast<size_t>(G.rows)) {}

void Ic0Preconditioner::apply(const double* r, double* z) const {
  solve_triangular(f_.L, Triangle::lower, r, y_.data());
  solve_triangular(f_.Lt, Triangle::upper, y_.data(), z);
}

}  // namespace pgsim
