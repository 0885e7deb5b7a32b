#pragma once
// Graph colouring of a structurally symmetric matrix: rows of one colour are mutually
// independent, so a Gauss-Seidel sweep or a triangular solve processes a whole colour at once
// (used by the colour-ordered IC(0) factor in src/pcg and the CMG Gauss-Seidel smoother in src/cmg).
#include <cstdint>
#include <vector>

#include "mna/csr.hpp"

namespace pgsim {

// Greedy first-fit colouring of the graph of a structurally symmetric matrix: adjacent rows get
// different colours. Returns the colour of every row (colours 0, 1, ...).
std::vector<int32_t> greedy_coloring(const CsrMatrix& A);
// The rows ordered by colour, stable within a colour: order[new] = old. The reordered matrix is
// permute_symmetric(A, inverse_permutation(order)) (cmg/galerkin.hpp).
std::vector<int32_t> color_order(const std::vector<int32_t>& color);
std::vector<int32_t> inverse_permutation(const std::vector<int32_t>& p);

}  // namespace pgsim
