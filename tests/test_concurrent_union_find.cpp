// mna/concurrent_union_find.hpp: sets united by many threads at once are the connected components
// a serial union-find finds, each rooted at its smallest member.
#include <catch2/catch.hpp>
#include <omp.h>

#include <cstdint>
#include <numeric>
#include <random>
#include <utility>
#include <vector>

#include "mna/concurrent_union_find.hpp"

using namespace pgsim;

namespace {

// The smallest member of each element's component, by a serial union-find.
std::vector<int32_t> serial_smallest(int32_t n, const std::vector<std::pair<int32_t, int32_t>>& edges) {
  std::vector<int32_t> parent(static_cast<size_t>(n));
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](int32_t x) {
    while (parent[size_t(x)] != x) x = parent[size_t(x)];
    return x;
  };
  for (auto [a, b] : edges) {
    a = find(a), b = find(b);
    if (a != b) parent[size_t(std::max(a, b))] = std::min(a, b);
  }
  std::vector<int32_t> smallest(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) smallest[size_t(i)] = find(i);
  return smallest;
}

}  // namespace

TEST_CASE("threads uniting at once leave each set rooted at its smallest member", "[union_find]") {
  // A grid's worth of local edges (long paths to shorten) and some random ones (sets merging
  // across the range): 200,000 elements, about half as many edges, so many sets stay apart.
  constexpr int32_t n = 200000;
  std::mt19937 rng(7);
  std::vector<std::pair<int32_t, int32_t>> edges;
  for (int32_t i = 0; i + 1 < n; ++i)
    if (rng() % 3 == 0) edges.emplace_back(i, i + 1);
  for (int k = 0; k < n / 6; ++k) edges.emplace_back(int32_t(rng() % n), int32_t(rng() % n));
  const std::vector<int32_t> expected = serial_smallest(n, edges);

  for (int threads : {1, 2, 8}) {
    ConcurrentUnionFind sets(n);
    const std::ptrdiff_t m = std::ptrdiff_t(edges.size());
#pragma omp parallel for num_threads(threads) schedule(dynamic, 64)
    for (std::ptrdiff_t k = 0; k < m; ++k) {
      sets.unite(edges[size_t(k)].first, edges[size_t(k)].second);
      (void)sets.find(edges[size_t(m - 1 - k)].first);  // finds among the unions, as reduce() does
    }
    // find() before flatten(), from many threads: the root is the smallest member already.
    std::vector<int32_t> found(static_cast<size_t>(n));
#pragma omp parallel for num_threads(threads)
    for (int32_t i = 0; i < n; ++i) found[size_t(i)] = sets.find(i);
    CHECK(found == expected);
    sets.flatten();
    int32_t wrong = 0;
    for (int32_t i = 0; i < n; ++i) wrong += sets.root(i) != expected[size_t(i)];
    INFO("threads " << threads);
    CHECK(wrong == 0);
  }
}
