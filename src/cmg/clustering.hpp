#pragma once
// Partition of a Laplacian's vertices into clusters of high conductance and bounded diameter,
// the vertices of the next CMG level (DESIGN.md section 3; thesis chapter 4.2.3).
#include <cstdint>
#include <vector>

#include "cmg/laplacian.hpp"
#include "mna/csr.hpp"
#include "parser/default_init.hpp"

namespace pgsim {

// The clustering's parameters (cmg/clustering.cpp says why these values; the device's
// clustering, gpu/cmg_coarsen.hpp, uses the same): no vertex is more than kClusterMaxHeight edges
// below its cluster's root, and a vertex whose forest edges carry less than kClusterWeakShare of
// its weighted degree becomes a root.
constexpr int kClusterMaxHeight = 3;
constexpr double kClusterWeakShare = 1.0 / 8.0;

struct Clustering {
  // Per vertex, in [0, count). A FillVector: sized unwritten and filled on all threads, where a
  // std::vector was first zeroed by one thread (140 MB on a 50M-node grid's level 0); the
  // builder only reads it (galerkin_coarse, the renumbering) and frees it.
  FillVector<int32_t> cluster_of;
  int32_t count = 0;                // clusters, numbered in the order of their first vertex
};

// A is a graph Laplacian (off-diagonals <= 0). Every vertex points at its heaviest neighbour (a
// forest); a vertex whose forest edges carry under 1/8 of its weighted degree is detached from its
// parent; trees are cut so no vertex is more than kClusterMaxHeight edges below its cluster's root.
Clustering cluster_vertices(const CsrMatrix& A);
// The same for level 0 read from G (the clusters of cluster_vertices(sdd_to_laplacian(G))).
Clustering cluster_vertices(const GroundedSdd& L);

}  // namespace pgsim
