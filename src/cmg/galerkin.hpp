#pragma once
// Coarse levels and renumbering of the CMG hierarchy.
#include <cstdint>
#include <vector>

#include "cmg/laplacian.hpp"
#include "mna/csr.hpp"

namespace pgsim {

// A_c = R^T A R for the vertex -> cluster map R (cluster_of, values in [0, clusters)): entries summed
// by cluster pair. For a Laplacian A the result is a Laplacian: intra-cluster edges cancel against
// the diagonal, which is recomputed as the negated sum of each row's off-diagonals.
CsrMatrix galerkin_coarse(const CsrMatrix& A, const FillVector<int32_t>& cluster_of, int32_t clusters);
// The same for level 0 read from G: galerkin_coarse(sdd_to_laplacian(G), ...) bit for bit, without
// the stored copy (the builder's level 0; cmg/laplacian.hpp).
CsrMatrix galerkin_coarse(const GroundedSdd& L, const FillVector<int32_t>& cluster_of, int32_t clusters);

// B = P A P^T with B[new_of_old[i]][new_of_old[j]] = A[i][j]; columns sorted in every row.
// A is taken by value: passed with std::move where it is not needed after, its arrays are freed
// on return (A and B are held at once, never more). diagonal, when not null, becomes B's
// diagonal (B.rows entries, 0 where a row stores none, as CsrMatrix::diagonal), taken while the
// entries are copied rather than by another pass over B (the CMG builder's Jacobi weights).
CsrMatrix permute_symmetric(CsrMatrix A, const std::vector<int32_t>& new_of_old,
                            std::vector<double>* diagonal = nullptr);

}  // namespace pgsim
