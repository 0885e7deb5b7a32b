#pragma once
// SDD matrix -> pure graph Laplacian (DESIGN.md section 3).
#include <cmath>
#include <cstdint>
#include <vector>

#include "mna/csr.hpp"

namespace pgsim {

// The Laplacian of G extended by one ground vertex (index G.rows): every row's excess diagonal
// e_i = G_ii - sum_j |G_ij| becomes an edge of weight e_i to the ground vertex. Off-diagonals are
// -|G_ij|, diagonals are the negated sum of the row's off-diagonals, so every row sums to zero.
CsrMatrix sdd_to_laplacian(const CsrMatrix& G);

// sdd_to_laplacian(G) read from G instead of stored: level 0 is clustered and coarsened from it
// (cmg/builder.cpp), where a stored copy, as large as G, was written (a pass over G and one over
// the copy's fresh pages) only to be read by those two and freed. It keeps each row's excess and
// the ground row's columns (G.rows + the ground degree entries); G must outlive it.
struct GroundedSdd {
  const CsrMatrix* G = nullptr;
  FillVector<double> excess;       // e_i = G_ii - sum_j |G_ij| of every row of G
  FillVector<int32_t> ground_col;  // the rows with e_i > 0, ascending: the ground row's off-diagonals

  int32_t rows() const { return G->rows + 1; }  // the ground vertex is the last
  // At least row v's off-diagonal count: G's row less its diagonal (if stored), plus the ground edge.
  int32_t row_bound(int32_t v) const {
    return v == G->rows ? static_cast<int32_t>(ground_col.size()) : G->ptr[v + 1] - G->ptr[v] + 1;
  }
  // f(u, L_vu) for row v's off-diagonals in sdd_to_laplacian's column order (ascending).
  template <class F>
  void for_each_off_diagonal(int32_t v, F f) const {
    const int32_t n = G->rows;
    if (v == n) {
      for (int32_t i : ground_col) f(i, -excess[size_t(i)]);
      return;
    }
    for (int32_t k = G->ptr[v]; k < G->ptr[v + 1]; ++k)
      if (G->col[k] != v && G->val[k] != 0) f(G->col[k], -std::fabs(G->val[k]));
    if (excess[size_t(v)] > 0) f(n, -excess[size_t(v)]);
  }
};
GroundedSdd grounded_sdd(const CsrMatrix& G);

// The same Laplacian renumbered, made from the grounded rows (G's, which L reads): vertex i
// (G.rows: the ground) becomes new_of_old[i] (a permutation of G.rows + 1 entries), columns
// sorted in every row. Bit for bit permute_symmetric(sdd_to_laplacian(G), new_of_old)
// (cmg/galerkin.hpp), made straight from G: the builder (cmg/builder.cpp) never stores level 0 in
// the clustering's numbering, as large as G, only to renumber it. diagonal, when not null,
// becomes the result's diagonal (G.rows + 1 entries), made with the rows instead of by another
// pass over them (the CMG builder's Jacobi weights).
CsrMatrix sdd_to_laplacian(const GroundedSdd& L, const std::vector<int32_t>& new_of_old,
                           std::vector<double>* diagonal = nullptr);

}  // namespace pgsim
