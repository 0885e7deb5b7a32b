#pragma once
// Partition of a Laplacian's vertices into clusters of high conductance and bounded diameter,
// the vertices of the next CMG level (DESIGN.md section 3; thesis chapter 4.2.3).
#include <cstdint>
#include <vector>

#include "cmg/laplacian.hpp"
#include "mna/csr.hpp"

namespace pgsim {

struct Clustering {
  std::vector<int32_t> cluster_of;  // per vertex, in [0, count)
  int32_t count = 0;                // clusters, numbered in the order of their first vertex
};

// A is a graph Laplacian (off-diagonals <= 0). Every vertex points at its heaviest neighbour (a
// forest); a vertex whose forest edges carry under 1/8 of its weighted degree is detached from its
// parent; trees are cut so no vertex is more than kMaxHeight edges below its cluster's root.
Clustering cluster_vertices(const CsrMatrix& A);
// The same for level 0 read from G (the clusters of cluster_vertices(sdd_to_laplacian(G))).
Clustering cluster_vertices(const GroundedSdd& L);

}  // namespace pgsim
