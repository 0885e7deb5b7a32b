#pragma once
// A level's rows as the clustering and the Galerkin product read them: a stored Laplacian
// (CsrMatrix) or level 0 read from the SDD matrix G (GroundedSdd, cmg/laplacian.hpp).
#include <cstdint>

#include "cmg/laplacian.hpp"
#include "mna/csr.hpp"

namespace pgsim {

inline int32_t level_rows(const CsrMatrix& A) { return A.rows; }
inline int32_t level_rows(const GroundedSdd& L) { return L.rows(); }

// At least row v's off-diagonal count.
inline int32_t row_bound(const CsrMatrix& A, int32_t v) { return A.ptr[v + 1] - A.ptr[v]; }
inline int32_t row_bound(const GroundedSdd& L, int32_t v) { return L.row_bound(v); }

// f(u, A_vu) for row v's off-diagonals, in column order.
template <class F>
void for_each_off_diagonal(const CsrMatrix& A, int32_t v, F f) {
  for (int32_t k = A.ptr[v]; k < A.ptr[v + 1]; ++k)
    if (A.col[k] != v) f(A.col[k], A.val[k]);
}
template <class F>
void for_each_off_diagonal(const GroundedSdd& L, int32_t v, F f) {
  L.for_each_off_diagonal(v, f);
}

}  // namespace pgsim
