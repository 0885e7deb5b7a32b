#pragma once
// One rank's share of the coarse correction's operators (dist/two_level.hpp), in the one layout
// that both applications read: the CPU one (two_level.hpp, these host functions) and the GPU
// one (gpu/two_level_device.hpp, the same steps as kernels). Built by dist::CoarseProblem.
//
// Z (0/1, a coarse unknown is a set of one rank's rows) is kept as index lists, and G Z as
// what it is on an aggregate's rows: a row i of G Z has, at its own coarse unknown u(i), the sum
// of G_ij over the j of u(i) (own_coupling, one double per row), and entries at other coarse
// unknowns only where i borders another aggregate or the cut (rest: a few rows). Per local row
// that is 16 bytes (position, own_coupling, member index) against about 40 for G Z, (G Z)^T and
// Z^T as CSR matrices.
//
// Positions: the coarse unknowns whose coarse solution this rank reads, its own first
// (position p < count is unknown first + p), then the neighbours' unknowns its rows of G Z
// reach (ascending). The GPU keeps only these rows of E^{-1}.
#include <cstdint>
#include <vector>

#include "dist/partition.hpp"
#include "mna/csr.hpp"

namespace pgsim::dist {

struct CoarseOperators {
  int32_t unknowns = 0;          // N_c, the coarse unknowns of all ranks
  int32_t first = 0, count = 0;  // this rank's own unknowns: [first, first + count)
  std::vector<int32_t> read;     // per position: its global coarse unknown (see above)
  std::vector<int32_t> position_of_row;  // per local row: its unknown's position (< count), or -1
  // Z^T: own unknown p has the rows members[member_ptr[p] .. member_ptr[p + 1]), ascending.
  std::vector<int32_t> member_ptr, members;
  std::vector<double> own_coupling;  // per local row: (G Z)[i][u(i)]; 0 for a row without unknown
  // The other entries of G Z: rest_rows (ascending) are the rows that have any; rest's row k
  // lists row rest_rows[k]'s (position, value), positions ascending.
  std::vector<int32_t> rest_rows;
  CsrMatrix rest;
  // rest^T over all N_c unknowns: row c lists the local rows whose rest entry is at unknown c.
  CsrMatrix rest_transposed;

  int32_t rows() const { return static_cast<int32_t>(position_of_row.size()); }
  int32_t positions() const { return static_cast<int32_t>(read.size()); }
  // Bytes these arrays hold (what the device holds of them, E^{-1} aside).
  size_t bytes() const;
};

// This rank's operators from its block and the global coarse unknown of each of its rows
// (unknown_of_row: own unknowns, in [first, first + count), or -1) and of each halo row
// (halo_unknown: from the neighbours; -1 for none). Local work only (on all threads): the
// collective part is CoarseProblem's.
CoarseOperators build_coarse_operators(const RankBlock& block, const std::vector<int32_t>& unknown_of_row,
                                       const std::vector<int32_t>& halo_unknown, int32_t first, int32_t count,
                                       int32_t unknowns);

// out[p] (p < count) = sum over own unknown p's rows i, ascending, of x[i], or of
// own_coupling[i] x[i] when `weighted`: Z^T x, and the own-unknown part of (G Z)^T x.
void own_sums(const CoarseOperators& op, const double* x, bool weighted, double* out);
// u = r - (G Z) y, y over positions: u[i] = r[i] - own_coupling[i] y[position(i)], then the rest
// rows' sums subtracted.
void subtract_gz(const CoarseOperators& op, const double* r, const double* y, double* u);
// c = (G Z)^T z over all N_c unknowns: rest^T z, then own_sums(weighted) added at [first, first + count).
void gz_transposed_times(const CoarseOperators& op, const double* z, double* c);
// z += Z (y1 - y2): y1 over positions, y2 over own positions.
void add_coarse(const CoarseOperators& op, const double* y1, const double* y2, double* z);

}  // namespace pgsim::dist
