#pragma once
// The Combinatorial Multigrid (CMG) hierarchy: built once, on the CPU (src/cmg) or, where the GPU
// solves, on the GPU bit for bit the same (gpu/cmg_build.hpp, whose DeviceCmgHierarchy holds these
// arrays on the device); applied by the CPU preconditioner (src/cmg) or the device cycle (src/gpu).
// This header is the contract between them: the arrays and their meaning, nothing about how they
// were made.
#include <cstdint>
#include <vector>

#include "mna/csr.hpp"

namespace pgsim {

// The smoother of the cycle below: damped Jacobi (the default) or multicolour symmetric
// Gauss-Seidel.
enum class CmgSmoother { jacobi, sgs };

// One level: a pure graph Laplacian (zero row sums, non-positive off-diagonals), its vertices
// numbered so that every cluster (= one vertex of the next level) is a contiguous range.
struct CmgLevel {
  CsrMatrix A;
  std::vector<double> inv_diag;      // 1 / (2 A_ii): the damped-Jacobi smoother
  std::vector<int32_t> cluster_ptr;  // next-level vertex c = this level's [cluster_ptr[c], cluster_ptr[c+1]);
                                     // empty on the coarsest level
  int repeats = 1;                   // t_l: child cycles per visit of this level
  std::vector<double> weights;       // w_k of repeat k (the Jacobi cycle below): empty means every w_k = 1,
                                     // else repeats entries; empty with CmgSmoother::sgs
  // The Gauss-Seidel colouring (CmgSmoother::sgs only; empty with Jacobi and on the coarsest
  // level): colour k is the rows color_rows[color_ptr[k], color_ptr[k+1]), ascending, and no two
  // rows of one colour are adjacent in A. It orders the sweeps only: the vertex numbering (and
  // so the contiguous clusters) is the same with either smoother.
  std::vector<int32_t> color_ptr;
  std::vector<int32_t> color_rows;
};

// Sparse Cholesky of the coarsest Laplacian with one vertex grounded (its row and column
// removed): P A' P^T = L L^T. The grounded vertex's value in the solution is 0.
struct CoarseFactor {
  int32_t grounded = 0;           // the coarsest-level vertex held at 0
  std::vector<int32_t> vertex;    // row i of L is coarsest-level vertex vertex[i]
  CsrMatrix L;                    // lower triangle with diagonal, columns sorted (diagonal last)
  CsrMatrix Lt;                   // L^T, upper triangle with diagonal, columns sorted (diagonal first)
};

// The preconditioner for the SDD system G x = b (n unknowns) is the CMG cycle on the Laplacian
// of G extended by one ground vertex (DESIGN.md section 3):
//   y_in[level0_of_unknown[i]] = b[i],  y_in[level0_ground] = -sum(b);
//   y = cycle(0, y_in);
//   z[i] = y[level0_of_unknown[i]] - y[level0_ground].
// cycle(l, r): if l is the coarsest level, the factor's solve; otherwise
//   x = inv_diag .* r
//   for k = 0, ..., repeats_l - 1:
//     rc = R^T (r - A x)              (R^T sums each cluster's entries)
//     y = x + R cycle(l + 1, rc)      (R copies a cluster's value to its vertices)
//     y += inv_diag .* (r - A y)
//     x = (1 - w_k) x + w_k y         (w_k = weights[k]; with w_k = 1, x = y to the last bit)
// a fixed symmetric positive definite operator, so plain PCG is valid. Why, with any weights:
// with S = I - inv_diag A (A-self-adjoint, spectrum in (0, 1]: inv_diag = 1 / (2 A_ii)) and
// K = I - R C R^T A (C the child's operator), one repeat maps the error e to
// (1 - w_k) e + w_k S K e, so the level's error propagation is E = p(SK) S with
// p(m) = prod_k (1 - w_k (1 - m)). Every (SK)^j S is A-self-adjoint, so E is, and the level's
// operator (I - E) A^+ is symmetric; it is positive definite while p < 1 on the spectrum of SK,
// which lies in [a, 1], a <= 0 the child's lowest error eigenvalue (0 below the exact coarsest
// solve). All weights 1 give p(m) = m^t, the plain repeats; the builder's weights
// (CmgOptions::chebyshev_rho) make p the Chebyshev polynomial of [a, rho], which damps that
// interval with fewer repeats and stays below 1 on [a, 1).
//
// With CmgSmoother::sgs, cycle(l, r) on a non-coarsest level is instead
//   x = 0
//   repeat repeats_l times:
//     x = forward(x)                  colours 0, 1, ..., k-1
//     rc = R^T (r - A x)
//     x += R cycle(l + 1, rc)
//     x = backward(x)                 colours k-1, ..., 1, 0
// where a sweep, for one colour at a time, updates every row i of the colour at once:
//   x_i += (r_i - (A x)_i) / A_ii      (1 / A_ii = 2 inv_diag_i, exact: a power-of-two scaling)
// The rows of a colour are not adjacent, so each reads only other colours' values: the forward
// sweep is x += (D + L)^{-1} (r - A x), a triangular solve with the lower triangle of A in colour
// order (the "colored" SpTRSV of DESIGN.md, applied in place through the colour's row list
// instead of a permuted copy of A), and the backward sweep the same with (D + U). The error
// propagation of forward is the A-adjoint of backward's, so the sequence forward, coarse,
// backward, forward, coarse, backward, ... reads the same transposed and backwards: the cycle
// is again a fixed symmetric operator, positive definite since Gauss-Seidel converges on the
// positive semidefinite Laplacian and the coarsest solve is exact.
struct CmgHierarchy {
  CmgSmoother smoother = CmgSmoother::jacobi;
  int32_t n = 0;                          // unknowns of G
  std::vector<int32_t> level0_of_unknown; // size n
  int32_t level0_ground = 0;              // the extra ground vertex at level 0
  std::vector<CmgLevel> levels;           // levels[0] has n + 1 vertices
  CoarseFactor coarse;                    // of levels.back()
};

}  // namespace pgsim
