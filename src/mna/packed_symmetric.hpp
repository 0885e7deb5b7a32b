#pragma once
// A symmetric CsrMatrix held with each off-diagonal pair once, for the one use the run has for
// reduce()'s G after the chain elimination: the whole system's residual check after the solve.
// Nothing reads G through the CMG build and the PCG, where the host's memory peaks; packed, it
// costs 4 B per row for offsets, 8 for the diagonal and 12 per pair instead of 4 per row and 12
// per stored entry: 21.5 instead of 37.4 B per netlist node on a 50M-node grid (34.9M rows,
// 144.3M entries).
#include <cstdint>
#include <optional>
#include <vector>

#include "mna/csr.hpp"
#include "parser/default_init.hpp"

namespace pgsim {

struct PackedSymmetric {
  int32_t rows = 0;
  FillVector<double> diag;  // G_ii, rows entries
  FillVector<int32_t> ptr;  // rows + 1 offsets into col/val: row i's entries left of the diagonal
  FillVector<int32_t> col;  // ascending within each row, all < the row
  FillVector<double> val;
};

// G packed when it is the symmetric matrix the packed form stands for: every row stores its
// diagonal, columns strictly ascending in every row, and the entries right of the diagonals are
// the mirrors of those left of them with the same bits (reduce()'s G: both ends of a conductance
// sum it in element order). The mirrors are compared by count and by a 64-bit hash summed over
// each side (one streaming pass, no lookups), so a G that differs from its mirror anywhere passes
// only with a chance of about 2^-64. nullopt for any other G, which the caller keeps as it is.
std::optional<PackedSymmetric> pack_symmetric(const CsrMatrix& G);

// relative_residual(G, b, x) (pcg/pcg_cpu.hpp) of the G that P packs, the same bits for any thread
// count: each row's terms are subtracted in G's column order, the squares summed in the same fixed
// order, without making G again.
double relative_residual(const PackedSymmetric& P, const std::vector<double>& b, const std::vector<double>& x);

}  // namespace pgsim
