#include "mna/concurrent_union_find.hpp"

#include <utility>

namespace pgsim {
namespace {

int32_t load(const int32_t& x) { return __atomic_load_n(&x, __ATOMIC_RELAXED); }

}  // namespace

// parent_ is resized unwritten and filled once, on all threads (zeroing it on one thread first, then
// writing every entry again, made the fill a serial pass as long as the parallel one).
ConcurrentUnionFind::ConcurrentUnionFind(int32_t n) : parent_(static_cast<size_t>(n)) {
#pragma omp parallel for schedule(static, 4096)
  for (int32_t i = 0; i < n; ++i) parent_[static_cast<size_t>(i)] = i;
}

int32_t ConcurrentUnionFind::find(int32_t x) {
  for (;;) {
    const int32_t p = load(parent_[static_cast<size_t>(x)]);
    if (p == x) return x;
    const int32_t gp = load(parent_[static_cast<size_t>(p)]);
    if (gp == p) return p;
    // Point x at its grandparent (path halving). A plain store, not a compare-and-swap: x is not a
    // root, and a non-root's parent only ever holds one of its ancestors (only roots are linked,
    // by unite()'s compare-and-swap), so whatever another thread wrote there meanwhile, gp is as
    // valid. A locked write on every step made each find claim its path's cache lines.
    __atomic_store_n(&parent_[static_cast<size_t>(x)], gp, __ATOMIC_RELAXED);
    x = gp;
  }
}

void ConcurrentUnionFind::unite(int32_t a, int32_t b) {
  for (;;) {
    a = find(a);
    b = find(b);
    if (a == b) return;
    if (a < b) std::swap(a, b);
    // Link the larger root a under b, if a is still a root.
    int32_t expected = a;
    if (__atomic_compare_exchange_n(&parent_[static_cast<size_t>(a)], &expected, b, false, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED))
      return;
  }
}

void ConcurrentUnionFind::flatten() {
  const int32_t n = static_cast<int32_t>(parent_.size());
  // Dynamic: a find's cost is its path's length, uneven by range of elements.
#pragma omp parallel for schedule(dynamic, 4096)
  for (int32_t i = 0; i < n; ++i) {
    const int32_t r = find(i);
    __atomic_store_n(&parent_[static_cast<size_t>(i)], r, __ATOMIC_RELAXED);
  }
}

}  // namespace pgsim
