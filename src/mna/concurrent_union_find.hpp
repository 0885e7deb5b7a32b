#pragma once
// Union-find that many threads may unite into at once (lock-free: a link is one compare-and-swap
// on a root's parent), for the connected components of a large graph.
//
// A root is only ever linked under a smaller index, so once every edge is united each set's root
// is its smallest member, whatever the threads' interleaving: the result does not depend on the
// thread count.
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "parser/default_init.hpp"

namespace pgsim {

class ConcurrentUnionFind {
 public:
  explicit ConcurrentUnionFind(int32_t n);
  // The forest that `parent` holds (each element's parent at or below it, a root its own), for
  // more unions.
  explicit ConcurrentUnionFind(FillVector<int32_t> parent) : parent_(std::move(parent)) {}

  // Safe to call from many threads at once, and together with find().
  void unite(int32_t a, int32_t b);
  // The root of x's set (path halving: concurrent finds only shorten paths).
  int32_t find(int32_t x);

  // After the last unite: every element's parent becomes its root (in parallel), so root() reads it.
  void flatten();
  int32_t root(int32_t x) const { return parent_[static_cast<size_t>(x)]; }

 private:
  FillVector<int32_t> parent_;  // first written by the constructor's parallel loop
};

}  // namespace pgsim
