#pragma once
// Helpers for the GPU tests: skip without a device, random SDD systems, and a small CMG
// hierarchy built by naive aggregation (enough to exercise every kernel of the device cycle;
// the real builder lives in src/cmg) with the reference cycle written straight from
// cmg/hierarchy.hpp.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "cmg/hierarchy.hpp"
#include "gpu/cmg_device.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/device_info.hpp"
#include "gpu/gpu_solver.hpp"
#include "mna/csr.hpp"

namespace pgsim::test {

// The device CMG cycle of h with `opt` applied to r, twice into the same output: what one
// application leaves in the level buffers must not leak into the next.
inline std::vector<double> device_apply(const CmgHierarchy& h, const gpu::CmgDeviceOptions& opt,
                                        const std::vector<double>& r) {
  auto M = gpu::make_device_cmg(h, opt);
  gpu::DeviceBuffer<double> dr(r), dz(r.size());
  M->apply(dr.data(), dz.data(), nullptr);
  M->apply(dr.data(), dz.data(), nullptr);
  PGSIM_CUDA(cudaDeviceSynchronize());
  return dz.download();
}

// Exits 77 (ctest: Skipped) when no CUDA device can be used. Call first in main-like spots.
inline void skip_without_gpu() {
  std::string why;
  if (!gpu::device_available(&why)) {
    std::printf("no GPU: %s; skipping\n", why.c_str());
    std::exit(77);
  }
}

inline CsrMatrix from_map(int32_t n, const std::vector<std::map<int32_t, double>>& rows) {
  CsrMatrix A;
  A.rows = n;
  for (const auto& r : rows) {
    for (auto [c, v] : r) {
      A.col.push_back(c);
      A.val.push_back(v);
    }
    A.ptr.push_back(int32_t(A.col.size()));
  }
  return A;
}

// An nx x ny grid SDD M-matrix: random conductances, every `pad`-th node tied to ground.
inline CsrMatrix grid_sdd(int32_t nx, int32_t ny, int32_t pad, std::mt19937& rng) {
  std::uniform_real_distribution<double> g(0.5, 2.0);
  const int32_t n = nx * ny;
  std::vector<std::map<int32_t, double>> rows(static_cast<size_t>(n));
  auto edge = [&](int32_t a, int32_t b, double w) {
    rows[a][a] += w;
    rows[b][b] += w;
    rows[a][b] -= w;
    rows[b][a] -= w;
  };
  for (int32_t y = 0; y < ny; ++y)
    for (int32_t x = 0; x < nx; ++x) {
      const int32_t i = y * nx + x;
      if (x + 1 < nx) edge(i, i + 1, g(rng));
      if (y + 1 < ny) edge(i, i + nx, g(rng));
      if (i % pad == 0) rows[i][i] += 10 * g(rng);
    }
  return from_map(n, rows);
}

inline std::vector<double> random_vector(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

// Galerkin coarse Laplacian A_c = R^T A R for contiguous clusters.
inline CsrMatrix galerkin(const CsrMatrix& A, const std::vector<int32_t>& cluster_ptr) {
  const int32_t nc = int32_t(cluster_ptr.size()) - 1;
  std::vector<int32_t> cl(static_cast<size_t>(A.rows));
  for (int32_t c = 0; c < nc; ++c)
    for (int32_t i = cluster_ptr[c]; i < cluster_ptr[c + 1]; ++i) cl[i] = c;
  std::vector<std::map<int32_t, double>> rows(static_cast<size_t>(nc));
  for (int32_t i = 0; i < A.rows; ++i)
    for (int32_t k = A.ptr[i]; k < A.ptr[i + 1]; ++k) rows[cl[i]][cl[A.col[k]]] += A.val[k];
  return from_map(nc, rows);
}

// A hierarchy for G: level 0 = G's Laplacian extended by a ground vertex, numbered by a random
// permutation; clusters of 1 to 4 consecutive vertices; stops at <= `coarse_rows` vertices.
inline CmgHierarchy naive_hierarchy(const CsrMatrix& G, int32_t coarse_rows, int repeats, std::mt19937& rng) {
  CmgHierarchy h;
  h.n = G.rows;
  const int32_t n0 = G.rows + 1;
  std::vector<int32_t> perm(static_cast<size_t>(n0));
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  h.level0_of_unknown.assign(perm.begin(), perm.begin() + G.rows);
  h.level0_ground = perm[size_t(G.rows)];
  std::vector<std::map<int32_t, double>> rows(static_cast<size_t>(n0));
  for (int32_t i = 0; i < G.rows; ++i) {
    const int32_t pi = perm[i], pg = h.level0_ground;
    double excess = 0;
    for (int32_t k = G.ptr[i]; k < G.ptr[i + 1]; ++k) {
      excess += G.val[k];
      rows[pi][perm[G.col[k]]] += G.val[k];
    }
    if (excess > 1e-14) {
      rows[pg][pg] += excess;
      rows[pi][pg] -= excess;
      rows[pg][pi] -= excess;
    }
  }
  CsrMatrix A = from_map(n0, rows);
  std::uniform_int_distribution<int32_t> size(1, 4);
  for (;;) {
    CmgLevel lev;
    lev.A = A;
    lev.inv_diag = A.diagonal();
    for (double& d : lev.inv_diag) d = 1.0 / (2.0 * d);
    lev.repeats = repeats;
    if (A.rows <= coarse_rows) {
      lev.repeats = 1;
      h.levels.push_back(std::move(lev));
      break;
    }
    lev.cluster_ptr.push_back(0);
    while (lev.cluster_ptr.back() < A.rows) lev.cluster_ptr.push_back(std::min(A.rows, lev.cluster_ptr.back() + size(rng)));
    A = galerkin(A, lev.cluster_ptr);
    h.levels.push_back(std::move(lev));
  }
  // Dense Cholesky of the coarsest Laplacian without its last vertex (grounded), stored as CSR.
  const CsrMatrix& C = h.levels.back().A;
  const int32_t m = C.rows - 1;
  h.coarse.grounded = m;
  std::vector<double> dense(size_t(m) * m, 0.0);
  for (int32_t i = 0; i < m; ++i)
    for (int32_t k = C.ptr[i]; k < C.ptr[i + 1]; ++k)
      if (C.col[k] < m) dense[size_t(i) * m + C.col[k]] = C.val[k];
  for (int32_t j = 0; j < m; ++j) {
    double d = dense[size_t(j) * m + j];
    for (int32_t k = 0; k < j; ++k) d -= dense[size_t(j) * m + k] * dense[size_t(j) * m + k];
    d = std::sqrt(d);
    dense[size_t(j) * m + j] = d;
    for (int32_t i = j + 1; i < m; ++i) {
      double s = dense[size_t(i) * m + j];
      for (int32_t k = 0; k < j; ++k) s -= dense[size_t(i) * m + k] * dense[size_t(j) * m + k];
      dense[size_t(i) * m + j] = s / d;
    }
  }
  auto& L = h.coarse.L;
  auto& Lt = h.coarse.Lt;
  L.rows = Lt.rows = m;
  for (int32_t i = 0; i < m; ++i) {
    h.coarse.vertex.push_back(i);
    for (int32_t j = 0; j <= i; ++j) {
      L.col.push_back(j);
      L.val.push_back(dense[size_t(i) * m + j]);
    }
    L.ptr.push_back(int32_t(L.col.size()));
    for (int32_t j = i; j < m; ++j) {
      Lt.col.push_back(j);
      Lt.val.push_back(dense[size_t(j) * m + i]);
    }
    Lt.ptr.push_back(int32_t(Lt.col.size()));
  }
  return h;
}

// The reference cycle of cmg/hierarchy.hpp, in plain loops.
inline std::vector<double> reference_cycle(const CmgHierarchy& h, size_t l, const std::vector<double>& r) {
  const CmgLevel& lev = h.levels[l];
  const int32_t n = lev.A.rows;
  if (l + 1 == h.levels.size()) {
    const auto& f = h.coarse;
    const int32_t m = f.L.rows;
    std::vector<double> y(static_cast<size_t>(m)), x(size_t(n), 0.0);
    for (int32_t i = 0; i < m; ++i) {
      double s = r[f.vertex[i]];
      for (int32_t k = f.L.ptr[i]; k < f.L.ptr[i + 1] - 1; ++k) s -= f.L.val[k] * y[f.L.col[k]];
      y[i] = s / f.L.val[f.L.ptr[i + 1] - 1];
    }
    for (int32_t i = m - 1; i >= 0; --i) {
      double s = y[i];
      for (int32_t k = f.Lt.ptr[i] + 1; k < f.Lt.ptr[i + 1]; ++k) s -= f.Lt.val[k] * y[f.Lt.col[k]];
      y[i] = s / f.Lt.val[f.Lt.ptr[i]];
    }
    for (int32_t i = 0; i < m; ++i) x[f.vertex[i]] = y[i];
    return x;
  }
  std::vector<double> x(static_cast<size_t>(n)), ax(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) x[i] = lev.inv_diag[i] * r[i];
  const int32_t nc = int32_t(lev.cluster_ptr.size()) - 1;
  for (int t = 0; t < lev.repeats; ++t) {
    lev.A.multiply(x.data(), ax.data());
    std::vector<double> rc(size_t(nc), 0.0);
    for (int32_t c = 0; c < nc; ++c)
      for (int32_t i = lev.cluster_ptr[c]; i < lev.cluster_ptr[c + 1]; ++i) rc[c] += r[i] - ax[i];
    std::vector<double> z = reference_cycle(h, l + 1, rc), y(x);
    for (int32_t c = 0; c < nc; ++c)
      for (int32_t i = lev.cluster_ptr[c]; i < lev.cluster_ptr[c + 1]; ++i) y[i] += z[c];
    lev.A.multiply(y.data(), ax.data());
    const double w = lev.weights.empty() ? 1.0 : lev.weights[size_t(t)];
    for (int32_t i = 0; i < n; ++i) x[i] = (1 - w) * x[i] + w * (y[i] + lev.inv_diag[i] * (r[i] - ax[i]));
  }
  return x;
}

inline std::vector<double> reference_cmg(const CmgHierarchy& h, const std::vector<double>& b) {
  std::vector<double> y(size_t(h.n) + 1);
  double sum = 0;
  for (int32_t i = 0; i < h.n; ++i) {
    y[h.level0_of_unknown[i]] = b[i];
    sum += b[i];
  }
  y[h.level0_ground] = -sum;
  std::vector<double> x = reference_cycle(h, 0, y), z(size_t(h.n));
  for (int32_t i = 0; i < h.n; ++i) z[i] = x[h.level0_of_unknown[i]] - x[h.level0_ground];
  return z;
}

inline double relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0, s = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    d = std::max(d, std::abs(a[i] - b[i]));
    s = std::max(s, std::abs(b[i]));
  }
  return s > 0 ? d / s : d;
}

// An SDD matrix whose rows of one weight tie everywhere: a square lattice of unit conductances
// (every vertex's heaviest neighbour a tie, broken by the lowest index), every 7th vertex
// grounded through `pad`, and one hub vertex joined to `spokes` others (a gathered coarse row
// longer than the host's radix-sort threshold).
inline CsrMatrix tied_lattice(int32_t side, double pad, int32_t spokes) {
  const int32_t n = side * side;
  std::vector<std::map<int32_t, double>> rows(static_cast<size_t>(n));
  auto edge = [&rows](int32_t i, int32_t j, double g) {
    rows[size_t(i)][j] -= g;
    rows[size_t(j)][i] -= g;
    rows[size_t(i)][i] += g;
    rows[size_t(j)][j] += g;
  };
  for (int32_t y = 0; y < side; ++y)
    for (int32_t x = 0; x < side; ++x) {
      const int32_t v = y * side + x;
      if (x + 1 < side) edge(v, v + 1, 1.0);
      if (y + 1 < side) edge(v, v + side, 1.0);
      if (v % 7 == 0) rows[size_t(v)][v] += pad;
    }
  for (int32_t k = 1; k <= spokes; ++k) edge(0, (k * 7919) % (n - 1) + 1, 0.25);
  return from_map(n, rows);
}

}  // namespace pgsim::test
