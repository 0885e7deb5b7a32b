#pragma once
// The contract of the distributed system: who owns which rows of the PCG system G x = b (after
// chain elimination), how rows are renumbered so each rank's are contiguous, and what one rank
// holds: its diagonal block, its couplings to other ranks' rows (the halo) and the lists of its
// own entries that it sends to each neighbour before every SpMV.
//
// Interim (docs/distributed.md): rank 0 holds the whole reduced system, partitions its graph
// (gathered there because rank 0 parsed and reduced the netlist alone) and sends every rank its
// RankBlock. The final design partitions a graph that no rank holds whole.
//
// Numbering. "Original" indices are G's rows as reduce() and eliminate_chains() leave them.
// "Global" indices number the same rows rank after rank: rank r owns global rows
// [offset[r], offset[r+1]), in their original order. "Local" indices are a rank's own rows,
// global - offset[rank]. "Halo" indices number the other ranks' rows a rank's rows touch.
//
// One SpMV y = G x on rank r (dist/halo_backend.hpp):
//   for each neighbour q:  receive x[q's rows listed in halo_global from q] into halo[recv range of q]
//                          send    x_local[send[q]] to q
//   y_local = interior x_local                  (while the messages travel)
//   wait; for each boundary row k: y_local[boundary_rows[k]] += (boundary halo)[k]
// Because G is symmetric, q needs rank r's row i exactly when row i touches a row of q, so each
// rank derives both its receive ranges and its send lists from its own rows alone; the two
// sides agree (tests/test_dist_partition.cpp checks it).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "mna/csr.hpp"

namespace pgsim::dist {

struct Partition {
  int32_t parts = 1;
  std::vector<int32_t> owner;     // owner[i]: the rank owning original row i, in [0, parts)
  std::vector<int32_t> global;    // global[i]: original row i's global index (a permutation)
  std::vector<int32_t> original;  // original[g]: the original row of global row g (global's inverse)
  std::vector<int32_t> offset;    // parts + 1 entries: rank r owns global rows [offset[r], offset[r+1])

  int32_t rows_of(int32_t rank) const { return offset[rank + 1] - offset[rank]; }
};

// A k-way partition of G's graph (off-diagonal entries as edges) into `parts` ranks: METIS
// when the build has it, else contiguous ranges of original rows of equal size. METIS
// minimises the cut weight with each edge weighted by its conductance in units of the
// weakest (capped at 1000): the block preconditioner drops exactly the cut couplings, so a cut
// through weak wires costs fewer iterations than one through vias (measured in
// docs/distributed.md); parts stay within METIS's default 3% of n / parts. parts == 1:
// everything on rank 0, original order. Deterministic: the same G and parts, the same partition.
// Requires 1 <= parts <= G.rows.
Partition partition_rows(const CsrMatrix& G, int32_t parts);

// A coupling's edge weight for the partitioners (METIS above, PT-Scotch in
// dist/scotch_partition.hpp): its conductance g in units of `weakest`, the system's weakest
// nonzero off-diagonal entry, rounded, within [1, kMaxCouplingWeight].
inline constexpr long kMaxCouplingWeight = 1000;
inline long coupling_weight(double g, double weakest) {
  return std::clamp(std::lround(std::fabs(g) / weakest), 1L, kMaxCouplingWeight);
}
// That `weakest`: the smallest nonzero |entry| off the diagonal of `rows`, whose row i has its
// diagonal in column first + i (a whole matrix: 0; a rank's rows with global columns: its first
// row); +infinity where there is none. All threads.
double weakest_coupling(const CsrMatrix& rows, int64_t first = 0);

// What a rank needs of another: `rank`, and the ranges and lists below.
struct Neighbor {
  int32_t rank = 0;
  int32_t recv_first = 0;      // the neighbour's rows occupy halo[recv_first, recv_first + recv_count)
  int32_t recv_count = 0;
  std::vector<int32_t> send;   // local indices of this rank's rows the neighbour needs, ascending
                               // (= ascending global index: the order of the neighbour's halo)
};

// Everything one rank holds of G x = b.
struct RankBlock {
  int32_t rank = 0;
  int32_t first_row = 0;             // global index of local row 0 (offset[rank])
  int64_t global_rows = 0;           // rows of the whole system
  CsrMatrix interior;                // rows x rows: G restricted to this rank's rows and columns
                                     // (local indices; the diagonal block, SPD and SDD like G)
  std::vector<int32_t> boundary_rows;  // local rows with a coupling to another rank, ascending
  CsrMatrix boundary;                // boundary_rows.size() rows x halo_global.size() columns:
                                     // row k holds row boundary_rows[k]'s entries in other ranks'
                                     // columns, as halo indices, ascending
  std::vector<int32_t> halo_global;  // halo index h -> global row, ascending (so grouped by owner)
  std::vector<Neighbor> neighbors;   // ascending rank; each neighbour both sends and receives
  std::vector<double> b;             // the right-hand side of this rank's rows, local order

  int32_t rows() const { return interior.rows; }
  int64_t nnz() const { return interior.nnz() + boundary.nnz(); }
  int32_t halo() const { return static_cast<int32_t>(halo_global.size()); }
};

// Rank `rank`'s block of G x = b under partition p.
RankBlock extract_block(const CsrMatrix& G, const std::vector<double>& b, const Partition& p, int32_t rank);

}  // namespace pgsim::dist
