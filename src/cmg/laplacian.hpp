#pragma once
// SDD matrix -> pure graph Laplacian (DESIGN.md section 3).
#include <cstdint>
#include <vector>

#include "mna/csr.hpp"

namespace pgsim {

// The Laplacian of G extended by one ground vertex (index G.rows): every row's excess diagonal
// e_i = G_ii - sum_j |G_ij| becomes an edge of weight e_i to the ground vertex. Off-diagonals are
// -|G_ij|, diagonals are the negated sum of the row's off-diagonals, so every row sums to zero.
CsrMatrix sdd_to_laplacian(const CsrMatrix& G);

// The same Laplacian renumbered: vertex i (G.rows: the ground) becomes new_of_old[i] (a
// permutation of G.rows + 1 entries), columns sorted in every row. Bit for bit
// permute_symmetric(sdd_to_laplacian(G), new_of_old) (cmg/galerkin.hpp), made straight from G:
// the builder (cmg/builder.cpp) frees level 0's unpermuted Laplacian once level 1 is made from it
// instead of holding it, as large as G, until the renumbering (26 B per netlist node at 5M nodes).
// diagonal, when not null, becomes the result's diagonal (G.rows + 1 entries), made with the rows
// instead of by another pass over them (the CMG builder's Jacobi weights).
CsrMatrix sdd_to_laplacian(const CsrMatrix& G, const std::vector<int32_t>& new_of_old,
                           std::vector<double>* diagonal = nullptr);

}  // namespace pgsim
