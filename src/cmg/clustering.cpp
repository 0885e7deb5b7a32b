#include "cmg/clustering.hpp"

#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <stdexcept>

#include "cmg/level_rows.hpp"
#include "mna/atomic_extremum.hpp"
#include "mna/prefix_sum.hpp"
#include "mna/touched_vector.hpp"

namespace pgsim {
namespace {

// kClusterMaxHeight (clustering.hpp), the longest path from a cluster's root down to a member.
// Grids' heaviest-neighbour forests are long paths: cutting them every few edges keeps each
// cluster's conductance high; short ones also coarsen less (measured on ibmpg1 and generated
// grids: 3 gives ~4x fewer vertices per level).
constexpr int kMaxHeight = kClusterMaxHeight;
// kClusterWeakShare: a vertex whose forest edges carry less than this share of its weighted
// degree is held too weakly by its tree: it becomes a root instead of hanging from its heaviest
// neighbour.
constexpr double kWeakShare = kClusterWeakShare;
// Rounds of fewer ready vertices run on one thread (forests can be deep: one round per level).
constexpr size_t kParallelRound = 16384;

// The vertices v with keep(v), in no particular order.
template <class Keep>
std::vector<int32_t> collect(int32_t n, Keep keep) {
  std::vector<int32_t> out;
#pragma omp parallel
  {
    std::vector<int32_t> mine;
#pragma omp for schedule(static, 4096) nowait
    for (int32_t v = 0; v < n; ++v)
      if (keep(v)) mine.push_back(v);
#pragma omp critical
    out.insert(out.end(), mine.begin(), mine.end());
  }
  return out;
}

// Leaves first: a vertex joins its parent's cluster unless the path below it is already
// kMaxHeight edges long (then it becomes a root). A vertex's decision depends only on its final
// height, known once all its children are done, so every children-first order gives the same
// forest: large rounds of ready vertices run in parallel (atomic max and count on the parent),
// the rest as one queue on one thread. children[v] is consumed.
void cut_tall_trees(FillVector<int32_t>& parent, FillVector<int32_t>& children) {
  const int32_t n = static_cast<int32_t>(parent.size());
  FillVector<int32_t> height;
  assign_parallel(height, parent.size());
  std::vector<int32_t> ready = collect(n, [&](int32_t v) { return children[v] == 0; });
  size_t done = 0;
  while (ready.size() >= kParallelRound && omp_get_max_threads() > 1) {
    std::vector<int32_t> next;
#pragma omp parallel
    {
      std::vector<int32_t> mine;
#pragma omp for schedule(static, 1024) nowait
      for (std::ptrdiff_t k = 0; k < std::ptrdiff_t(ready.size()); ++k) {
        const int32_t v = ready[size_t(k)], p = parent[v];
        if (p == v) continue;
        if (height[v] >= kMaxHeight)
          parent[v] = v;
        else
          atomic_raise_to(height[p], height[v] + 1);
        int32_t left;
#pragma omp atomic capture
        left = --children[p];
        if (left == 0) mine.push_back(p);
      }
#pragma omp critical
      next.insert(next.end(), mine.begin(), mine.end());
    }
    done += ready.size();
    ready.swap(next);
  }
  ready.reserve(parent.size() - done);
  for (size_t head = 0; head < ready.size(); ++head) {
    const int32_t v = ready[head];
    const int32_t p = parent[v];
    if (p == v) continue;
    if (height[v] >= kMaxHeight) {
      parent[v] = v;
    } else {
      height[p] = std::max(height[p], height[v] + 1);
    }
    if (--children[p] == 0) ready.push_back(p);
  }
  done += ready.size();
  if (done != parent.size()) throw std::logic_error("cmg clustering: the heaviest-neighbour graph has a cycle");
}

// cluster_vertices of a stored level or of level 0 read from G: the same rows in the same order,
// so the same clusters.
template <class Level>
Clustering cluster(const Level& A) {
  const int32_t n = level_rows(A);
  const size_t un = static_cast<size_t>(n);
  // Arrays of this computation only: resized unwritten, each element written first by the loop
  // that fills it (on all threads).
  FillVector<int32_t> chosen, parent;
  FillVector<double> heaviest, volume;
  chosen.resize(un);
  parent.resize(un);
  heaviest.resize(un);
  volume.resize(un);

  // Heaviest neighbour (ties: the lowest index, so the forest has no cycles longer than two).
#pragma omp parallel for schedule(static, 4096)
  for (int32_t v = 0; v < n; ++v) {
    int32_t best = v;
    double best_w = 0, vol = 0;
    for_each_off_diagonal(A, v, [&](int32_t u, double a) {
      const double w = -a;
      if (w <= 0) return;
      vol += w;
      if (w > best_w) {
        best_w = w;
        best = u;
      }
    });
    chosen[v] = best;
    heaviest[v] = best_w;
    volume[v] = vol;
  }
  // Two vertices that chose each other: the lower index becomes the root.
#pragma omp parallel for schedule(static, 4096)
  for (int32_t v = 0; v < n; ++v) {
    const int32_t p = chosen[v];
    parent[v] = p != v && chosen[p] == v && v < p ? v : p;
  }

  // A vertex whose forest edges (its own and its children's) carry under kWeakShare of its
  // weighted degree leaves its parent. Its own edge alone decides for most vertices (a sum of
  // positive weights is never below one of them); the others sum the forest weight in
  // increasing vertex order (a child is a neighbour: the row's sorted columns give that order),
  // so the decisions do not depend on the thread count. New parents go to `chosen`, no longer
  // needed, so every row scan reads the parents before any cut.
#pragma omp parallel for schedule(static, 4096)
  for (int32_t v = 0; v < n; ++v) {
    const double threshold = kWeakShare * volume[v];
    bool weak = parent[v] != v && heaviest[v] < threshold;
    if (weak) {
      bool own_added = false;
      double w = 0;
      for_each_off_diagonal(A, v, [&](int32_t u, double) {
        if (!own_added && u > v) {
          w += heaviest[v];
          own_added = true;
        }
        if (parent[u] == v) w += heaviest[u];
      });
      if (!own_added) w += heaviest[v];
      weak = w < threshold;
    }
    chosen[v] = weak ? v : parent[v];
  }
  parent.swap(chosen);
  FillVector<int32_t> children;
  assign_parallel(children, un);
#pragma omp parallel for schedule(static, 4096)
  for (int32_t v = 0; v < n; ++v)
    if (parent[v] != v) {
#pragma omp atomic
      ++children[parent[v]];
    }

  cut_tall_trees(parent, children);

  // Every vertex is at most kMaxHeight edges below its root.
  FillVector<int32_t> root;
  root.resize(un);
#pragma omp parallel for schedule(static, 4096)
  for (int32_t v = 0; v < n; ++v) {
    int32_t r = v;
    while (parent[r] != r) r = parent[r];
    root[v] = r;
  }
  // Clusters numbered in the order of their first (smallest) vertex, in parallel: each root gets
  // its cluster's first vertex, the first vertices are counted in vertex order (a prefix sum),
  // and each root's slot then takes its cluster's number, which every member copies.
  Clustering c;
  FillVector<int32_t> first;  // per root: its cluster's first vertex, then the cluster's number
  assign_parallel(first, un, n);
#pragma omp parallel for schedule(static, 4096)
  for (int32_t v = 0; v < n; ++v) atomic_lower_to(first[root[v]], v);
  c.cluster_of.resize(un);  // unwritten: every vertex's flag written below
#pragma omp parallel for schedule(static, 4096)
  for (int32_t v = 0; v < n; ++v) c.cluster_of[v] = first[root[v]] == v;
  prefix_sum(c.cluster_of);  // at a first vertex: its cluster's number + 1
  c.count = n > 0 ? c.cluster_of[un - 1] : 0;
#pragma omp parallel for schedule(static, 4096)
  for (int32_t v = 0; v < n; ++v)
    if (root[v] == v) first[v] = c.cluster_of[first[v]] - 1;
#pragma omp parallel for schedule(static, 4096)
  for (int32_t v = 0; v < n; ++v) c.cluster_of[v] = first[root[v]];
  return c;
}

}  // namespace

Clustering cluster_vertices(const CsrMatrix& A) { return cluster(A); }
Clustering cluster_vertices(const GroundedSdd& L) { return cluster(L); }

}  // namespace pgsim
