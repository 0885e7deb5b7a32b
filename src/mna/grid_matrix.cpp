#include "mna/grid_matrix.hpp"

#include <random>

namespace pgsim {

CsrMatrix grid_matrix(int32_t nx, int32_t ny, uint32_t seed, int32_t pad_pitch) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> conductance(0.5, 2.0);
  const int64_t n = int64_t(nx) * ny;
  // Segment conductances: east[v] joins v and v+1, north[v] joins v and v+nx.
  std::vector<double> east(static_cast<size_t>(n)), north(static_cast<size_t>(n));
  for (int64_t v = 0; v < n; ++v) {
    east[v] = conductance(rng);
    north[v] = conductance(rng);
  }
  CsrMatrix G;
  G.rows = static_cast<int32_t>(n);
  G.ptr.resize(static_cast<size_t>(n) + 1);
  G.col.reserve(static_cast<size_t>(5 * n));
  G.val.reserve(static_cast<size_t>(5 * n));
  for (int32_t y = 0; y < ny; ++y)
    for (int32_t x = 0; x < nx; ++x) {
      const int32_t v = y * nx + x;
      double diag = (x % pad_pitch == 0 && y % pad_pitch == 0) ? 10.0 : 0.0;
      auto edge = [&](int32_t u, double g) {
        G.col.push_back(u);
        G.val.push_back(-g);
        diag += g;
      };
      if (y > 0) edge(v - nx, north[v - nx]);
      if (x > 0) edge(v - 1, east[v - 1]);
      const size_t diag_at = G.col.size();
      G.col.push_back(v);
      G.val.push_back(0);
      if (x + 1 < nx) edge(v + 1, east[v]);
      if (y + 1 < ny) edge(v + nx, north[v]);
      G.val[diag_at] = diag;
      G.ptr[v + 1] = static_cast<int32_t>(G.col.size());
    }
  return G;
}

}  // namespace pgsim
