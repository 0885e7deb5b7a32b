#pragma once
// SDD matrix -> pure graph Laplacian (DESIGN.md section 3).
#include "mna/csr.hpp"

namespace pgsim {

// The Laplacian of G extended by one ground vertex (index G.rows): every row's excess diagonal
// e_i = G_ii - sum_j |G_ij| becomes an edge of weight e_i to the ground vertex. Off-diagonals are
// -|G_ij|, diagonals are the negated sum of the row's off-diagonals, so every row sums to zero.
CsrMatrix sdd_to_laplacian(const CsrMatrix& G);

}  // namespace pgsim
