#pragma once
// Random sparse triangles of the shapes the triangular-solve tests cover, and the IC(0) factors
// of real systems (ibmpg1, a generated grid).
#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "mna/csr.hpp"
#include "mna/grid_matrix.hpp"
#include "mna/reduce.hpp"
#include "parser/netlist.hpp"
#include "pcg/triangular.hpp"
#include "test_util.hpp"

namespace pgsim::test {

enum class Shape {
  chain,       // every row needs the one before it: as many levels as rows
  wide,        // 8 levels of 4000 rows each
  dense,       // 300 rows, each needing ~60% of the earlier ones (rows longer than a warp)
  empty_runs,  // runs of 500 rows with no off-diagonal alternating with runs of chains
};

inline std::string shape_name(Shape s) {
  switch (s) {
    case Shape::chain: return "chain";
    case Shape::wide: return "wide levels";
    case Shape::dense: return "dense block";
    case Shape::empty_runs: return "empty-level runs";
  }
  return "?";
}

// A lower triangle of the given shape, strictly diagonally dominant (so every solve is well
// conditioned and 1e-12 agreement is a fair demand), diagonal last in every row.
inline CsrMatrix random_lower(Shape shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  auto pick = [&](int32_t lo, int32_t hi) { return std::uniform_int_distribution<int32_t>(lo, hi - 1)(rng); };
  const int32_t n = shape == Shape::chain ? 3000 : shape == Shape::wide ? 32000 : shape == Shape::dense ? 300 : 5000;
  CsrMatrix L;
  L.rows = n;
  L.ptr.assign(static_cast<size_t>(n) + 1, 0);
  std::vector<int32_t> deps;
  for (int32_t i = 0; i < n; ++i) {
    deps.clear();
    switch (shape) {
      case Shape::chain:
        if (i > 0) deps.push_back(i - 1);
        if (i > 1 && rng() % 3 == 0) deps.push_back(pick(0, i - 1));
        break;
      case Shape::wide: {
        const int32_t level_size = n / 8, level_start = i / level_size * level_size;
        if (level_start > 0) {
          deps.push_back(pick(level_start - level_size, level_start));
          for (int r = int(rng() % 4); r > 0; --r) deps.push_back(pick(0, level_start));
        }
        break;
      }
      case Shape::dense:
        for (int32_t j = 0; j < i; ++j)
          if (rng() % 10 < 6) deps.push_back(j);
        break;
      case Shape::empty_runs:
        if ((i / 500) % 2 == 1) {
          deps.push_back(i - 1);
          deps.push_back(pick(0, i));
        }
        break;
    }
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    double offsum = 0;
    for (int32_t j : deps) {
      const double v = value(rng);
      L.col.push_back(j);
      L.val.push_back(v);
      offsum += std::abs(v);
    }
    L.col.push_back(i);
    L.val.push_back((1.0 + offsum) * (rng() % 2 ? 1.0 : -1.0));
    L.ptr[i + 1] = static_cast<int32_t>(L.col.size());
  }
  return L;
}

inline CsrMatrix ibmpg1_matrix() { return reduce(parse_netlist(shared_data("ibmpg1.spice"))).G; }

// max |a - b| / max |b|
inline double max_relative_error(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0, s = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    d = std::max(d, std::abs(a[i] - b[i]));
    s = std::max(s, std::abs(b[i]));
  }
  return d / s;
}

}  // namespace pgsim::test
