#pragma once
// Union-find whose members carry a potential relative to their set's root, for merging
// nodes joined by voltage sources (v(a) = v(b) + E) and shorts into super-nodes.
#include <cstdint>
#include <numeric>
#include <vector>

namespace pgsim {

class PotentialUnionFind {
 public:
  explicit PotentialUnionFind(uint32_t n) : parent_(n), offset_(n, 0.0) {
    std::iota(parent_.begin(), parent_.end(), 0u);
  }

  // Root of x; afterwards offset(x) is v(x) - v(root).
  uint32_t find(uint32_t x) {
    uint32_t root = x;
    while (parent_[root] != root) root = parent_[root];
    // Second pass: point every node on the path at the root, summing offsets from the top.
    // Collect the path first so each node's offset is rebased exactly once.
    path_.clear();
    for (uint32_t y = x; parent_[y] != root && y != root; y = parent_[y]) path_.push_back(y);
    for (size_t i = path_.size(); i-- > 0;) {
      uint32_t y = path_[i];
      offset_[y] += offset_[parent_[y]];
      parent_[y] = root;
    }
    return root;
  }
  double offset(uint32_t x) const { return offset_[x]; }  // valid right after find(x)

  // Points every node straight at its root, one node after another (compressing overlapping
  // paths in parallel would race on their offsets). Afterwards, until the next unite(),
  // flat_root(x) and offset(x) may be read from many threads at once.
  void flatten() {
    for (uint32_t x = 0; x < parent_.size(); ++x) find(x);
  }
  uint32_t flat_root(uint32_t x) const { return parent_[x]; }

  // Records v(a) - v(b) = e for a and b in different sets (roots ra, rb, found just before).
  void unite(uint32_t a, uint32_t b, double e) {
    uint32_t ra = find(a), rb = find(b);
    double oa = offset_[a], ob = offset_[b];
    // v(ra) = v(a) - oa = v(b) + e - oa = v(rb) + ob + e - oa
    parent_[ra] = rb;
    offset_[ra] = ob + e - oa;
  }

 private:
  std::vector<uint32_t> parent_;
  std::vector<double> offset_;
  std::vector<uint32_t> path_;
};

}  // namespace pgsim
