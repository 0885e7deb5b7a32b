#pragma once
// Union-find whose members carry a potential relative to their set's root, for merging
// nodes joined by voltage sources (v(a) = v(b) + E) and shorts into super-nodes.
//
// Threads may work on disjoint sets at once (reduce.cpp gives each thread whole components),
// each passing its own `path` scratch: an operation touches only the sets it names.
#include <cstdint>
#include <vector>

#include "parser/default_init.hpp"

namespace pgsim {

class PotentialUnionFind {
 public:
  // The arrays are resized unwritten and filled once, on all threads.
  explicit PotentialUnionFind(uint32_t n) : parent_(n), offset_(n) {
    const std::ptrdiff_t sn = n;
#pragma omp parallel for schedule(static, 4096)
    for (std::ptrdiff_t i = 0; i < sn; ++i) parent_[size_t(i)] = uint32_t(i), offset_[size_t(i)] = 0;
  }

  // Root of x; afterwards offset(x) is v(x) - v(root).
  uint32_t find(uint32_t x, std::vector<uint32_t>& path) {
    uint32_t root = x;
    while (parent_[root] != root) root = parent_[root];
    // Second pass: point every node on the path at the root, summing offsets from the top.
    // Collect the path first so each node's offset is rebased exactly once.
    path.clear();
    for (uint32_t y = x; parent_[y] != root && y != root; y = parent_[y]) path.push_back(y);
    for (size_t i = path.size(); i-- > 0;) {
      uint32_t y = path[i];
      offset_[y] += offset_[parent_[y]];
      parent_[y] = root;
    }
    return root;
  }
  double offset(uint32_t x) const { return offset_[x]; }  // valid right after find(x)

  // After the last unite, once find(x) has been called for every x of a set (in increasing x, for
  // offsets rounded as a serial pass rounds them), flat_root(x) and offset(x) may be read from
  // many threads at once. An x never united is its own root: no find needed.
  uint32_t flat_root(uint32_t x) const { return parent_[x]; }

  // Records v(a) - v(b) = e for a and b in different sets.
  void unite(uint32_t a, uint32_t b, double e, std::vector<uint32_t>& path) {
    uint32_t ra = find(a, path), rb = find(b, path);
    double oa = offset_[a], ob = offset_[b];
    // v(ra) = v(a) - oa = v(b) + e - oa = v(rb) + ob + e - oa
    parent_[ra] = rb;
    offset_[ra] = ob + e - oa;
  }

 private:
  FillVector<uint32_t> parent_;
  FillVector<double> offset_;
};

}  // namespace pgsim
