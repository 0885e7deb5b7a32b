#pragma once
// An IBM-like power grid built directly as an SDD system, for tests and benchmarks that need
// 100k+ unknowns without a netlist: two metal layers (horizontal wires below, vertical above),
// vias at the crossings on every `via_stride`-th row and column, pads to a 1.8 V supply every `pad_stride` crossings on the
// top layer, a load current at every bottom-layer node. Conductances vary +-50% (seeded).
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "mna/chain_elimination.hpp"
#include "mna/csr.hpp"

namespace pgsim::test {

struct GridSystem {
  CsrMatrix G;
  std::vector<double> b;
};

struct GridShape {
  int32_t nx = 100, ny = 100;  // crossings per layer
  int32_t via_stride = 2;      // vias where x or y is a multiple; 1: everywhere (no wire chains)
  int32_t pad_stride = 20;
  uint32_t seed = 1;
};

inline GridSystem make_grid_system(const GridShape& s) {
  const int32_t per_layer = s.nx * s.ny;
  const int32_t n = 2 * per_layer;
  auto node = [&](int layer, int32_t x, int32_t y) { return layer * per_layer + y * s.nx + x; };
  std::mt19937 rng(s.seed);
  std::uniform_real_distribution<double> spread(0.5, 1.5);
  // Edges as (u, v, g), then CSR with both triangles and the diagonal.
  struct Edge {
    int32_t u, v;
    double g;
  };
  std::vector<Edge> edges;
  std::vector<double> excess(static_cast<size_t>(n), 0.0);
  GridSystem sys;
  sys.b.assign(static_cast<size_t>(n), 0.0);
  for (int32_t y = 0; y < s.ny; ++y)
    for (int32_t x = 0; x < s.nx; ++x) {
      if (x + 1 < s.nx) edges.push_back({node(0, x, y), node(0, x + 1, y), 10.0 * spread(rng)});
      if (y + 1 < s.ny) edges.push_back({node(1, x, y), node(1, x, y + 1), 20.0 * spread(rng)});
      if (x % s.via_stride == 0 || y % s.via_stride == 0) edges.push_back({node(0, x, y), node(1, x, y), 50.0});
      if (x % s.pad_stride == 0 && y % s.pad_stride == 0) {
        const double g_pad = 100.0;
        excess[node(1, x, y)] += g_pad;
        sys.b[node(1, x, y)] += g_pad * 1.8;
      }
      sys.b[node(0, x, y)] -= 2e-3 * spread(rng);
    }
  std::vector<int32_t> degree(static_cast<size_t>(n), 1);
  for (const Edge& e : edges) {
    ++degree[e.u];
    ++degree[e.v];
  }
  CsrMatrix& G = sys.G;
  G.rows = n;
  G.ptr.assign(static_cast<size_t>(n) + 1, 0);
  for (int32_t i = 0; i < n; ++i) G.ptr[i + 1] = G.ptr[i] + degree[i];
  G.col.assign(static_cast<size_t>(G.ptr[n]), 0);
  G.val.assign(G.col.size(), 0.0);
  std::vector<int32_t> next(G.ptr.begin(), G.ptr.end() - 1);
  for (int32_t i = 0; i < n; ++i) {
    G.col[next[i]] = i;
    G.val[next[i]++] = excess[i];
  }
  for (const Edge& e : edges) {
    G.col[next[e.u]] = e.v;
    G.val[next[e.u]++] = -e.g;
    G.col[next[e.v]] = e.u;
    G.val[next[e.v]++] = -e.g;
    G.val[G.ptr[e.u]] += e.g;  // the diagonal sits first until the rows are sorted
    G.val[G.ptr[e.v]] += e.g;
  }
  for (int32_t i = 0; i < n; ++i) {
    std::vector<std::pair<int32_t, double>> row;
    for (int32_t k = G.ptr[i]; k < G.ptr[i + 1]; ++k) row.emplace_back(G.col[k], G.val[k]);
    std::sort(row.begin(), row.end());
    for (size_t k = 0; k < row.size(); ++k) {
      G.col[G.ptr[i] + k] = row[k].first;
      G.val[G.ptr[i] + k] = row[k].second;
    }
  }
  return sys;
}

// The system the distributed PCG partitions: an nx x ny grid (other shape fields at their
// defaults) with its wire chains eliminated.
inline EliminatedSystem make_eliminated_grid(int32_t nx, int32_t ny) {
  GridShape shape;
  shape.nx = nx;
  shape.ny = ny;
  const GridSystem sys = make_grid_system(shape);
  return eliminate_chains(sys.G, sys.b);
}

}  // namespace pgsim::test
