#include "gpu/cmg_device.hpp"

#include <cooperative_groups.h>

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "gpu/cmg_build.hpp"
#include "gpu/coarse_inverse.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/device_arena.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/host_staging.hpp"
#include "gpu/launch.cuh"
#include "mna/stopwatch.hpp"

namespace pgsim::gpu {
namespace {

namespace cg = cooperative_groups;

constexpr int kMaxLevels = 32;
constexpr int kTailBlock = 1024;
// Lanes per cluster and per row where the level is large (bandwidth bound: a cluster's nonzeros
// are ~4 rows x ~6, a row's ~6). Smaller levels get up to a warp (see lanes_for).
constexpr int kRestrictLanes = 8;
constexpr int kProlongLanes = 4;
constexpr int kSmoothLanes = 4;    // lanes per row of a Gauss-Seidel colour
constexpr int kCoarseLanes = 32;   // lanes per row of the dense coarse inverse
// Rows and clusters with more nonzeros than this (the ground vertex at level 0 and the clusters
// holding it further down: thousands of entries) get a whole block each; a lane group would
// walk them alone and hold up the whole launch.
constexpr int32_t kLongRow = 128;
constexpr int32_t kLongCluster = 512;
constexpr int32_t kChunk = 1024;

// Items (rows or clusters) too long for a lane group, cut into chunks of at most kChunk
// nonzeros, one block per chunk. Per chunk: its item, its nonzero range, and where the item's
// chunks start and how many there are. The last block to finish an item adds its chunks'
// partial sums in chunk order (deterministic) and writes the item's result.
struct LongItems {
  int32_t chunks = 0;
  const int32_t* item = nullptr;
  const int32_t* begin = nullptr;
  const int32_t* end = nullptr;
  const int32_t* first = nullptr;
  const int32_t* count = nullptr;
  double* partial = nullptr;
  unsigned* finished = nullptr;  // per item, at its first chunk; 0 between launches
};

// What the kernels see of one level: plain pointers into its device buffers.
template <class V>
struct LevelView {
  int32_t rows = 0, clusters = 0;  // clusters = next level's rows (0 on the coarsest)
  int repeats = 1;
  const int32_t* ptr = nullptr;
  const int32_t* col = nullptr;
  const V* val = nullptr;
  const V* invd = nullptr;
  const int32_t* cptr = nullptr;  // cluster c = rows [cptr[c], cptr[c+1])
  const int32_t* cl = nullptr;    // cluster of each row
  const int32_t* color_rows = nullptr;  // sgs: each colour's rows, its long rows (> kLongRow) first
  LongItems long_rows, long_clusters;  // rows with more than kLongRow, clusters with more than kLongCluster nonzeros
  int restrict_lanes = kRestrictLanes, prolong_lanes = kProlongLanes;  // per cluster, per row (host side)
  const double* weights = nullptr;  // w_k of repeat k (CmgLevel::weights, 1 where it is empty); the tail reads
                                    // them here, the grid kernels get theirs as an argument
  double* b = nullptr;            // right-hand side of this level's cycle
  double* x[2] = {nullptr, nullptr};
};

// Visit k (0-based) of the child writes x[k % 2]; the level's result is where the last went.
template <class V>
__host__ __device__ inline double* result_of(const LevelView<V>& L) {
  return L.x[(L.repeats - 1) % 2];
}

// x_j as the cycle holds it: invD b on the first visit (never stored), else the stored vector.
template <class V, bool First>
__device__ inline double x_at(const LevelView<V>& L, const double* xin, int32_t j) {
  return First ? double(L.invd[j]) * L.b[j] : xin[j];
}

// ---- a lane's work on a regular item in two phases --------------------------------------------
// The level's matrix, inverse diagonal and clusters never change during a solve; only b, x and
// the child's correction do, and those are written by the kernel launched just before. So a
// kernel loads its item's fixed data first ("fetch": offsets, the first kPrefetch nonzeros of the
// lane, their clusters and inverse diagonals), and only then waits for the kernel before
// (programmatic dependent launch, launch.cuh), which it overlaps: on the small levels, where a
// kernel's time is its chain of dependent loads, the chain after the wait shrinks from four
// loads (offsets, column, cluster or invD, value) to one. The sums keep their order, so the
// result is the same to the last bit as with one phase.
constexpr int kPrefetch = 4;

// The first nonzeros k = k0 + lane + u W (u < kPrefetch) of a lane: column, value, and what the
// cycle reads at that column that never changes (its invD on the first visit, its cluster).
template <class V, bool First, bool Cluster>
struct Fetched {
  int32_t col[kPrefetch];
  double val[kPrefetch];
  double invd[First ? kPrefetch : 1];
  int32_t cl[Cluster ? kPrefetch : 1];
};

// The lane's nonzeros are k0 + lane + u stride (stride: its group's width, or a block's size).
template <class V, bool First, bool Cluster>
__device__ inline void fetch_nonzeros(const LevelView<V>& L, int32_t k0, int32_t k1, int lane, int stride,
                                      Fetched<V, First, Cluster>& f) {
#pragma unroll
  for (int u = 0; u < kPrefetch; ++u) {
    const int32_t k = k0 + lane + u * stride;
    const bool in = k < k1;
    f.col[u] = in ? L.col[k] : 0;
    f.val[u] = in ? double(L.val[k]) : 0.0;
    if constexpr (First) f.invd[u] = in ? double(L.invd[f.col[u]]) : 0.0;
    if constexpr (Cluster) f.cl[u] = in ? L.cl[f.col[u]] : 0;
  }
}

// x_j as the cycle holds it, for the fetched nonzero u.
template <class V, bool First, bool Cluster>
__device__ inline double x_fetched(const LevelView<V>& L, const double* xin, const Fetched<V, First, Cluster>& f,
                                   int u) {
  if constexpr (First)
    return f.invd[u] * L.b[f.col[u]];
  else
    return xin[f.col[u]];
}

// s += term(batch, u) over the lane's nonzeros k0 + lane + m stride (m = 0, 1, ...), in that
// order: the first kPrefetch from `first` (fetched before the wait), the rest in batches of
// kPrefetch whose loads are all issued before any is used (one chain of dependent loads per
// batch, not per nonzero).
template <class V, bool First, bool Cluster, class Term>
__device__ inline void add_nonzeros(const LevelView<V>& L, int32_t k0, int32_t k1, int lane, int stride,
                                    const Fetched<V, First, Cluster>& first, Term term, double& s) {
#pragma unroll
  for (int u = 0; u < kPrefetch; ++u)
    if (k0 + lane + u * stride < k1) s += term(first, u);
  for (int32_t base = k0 + kPrefetch * stride; base < k1; base += kPrefetch * stride) {
    Fetched<V, First, Cluster> batch;
    fetch_nonzeros<V, First, Cluster>(L, base, k1, lane, stride, batch);
#pragma unroll
    for (int u = 0; u < kPrefetch; ++u)
      if (base + lane + u * stride < k1) s += term(batch, u);
  }
}

// A nonzero's share of a restriction, -a_ij x_j, and of a prolongation, a_ij (x_j + z_cl(j)).
template <class V, bool First>
__device__ inline auto restrict_term(const LevelView<V>& L, const double* xin) {
  return [&L, xin](const Fetched<V, First, false>& f, int u) { return -(f.val[u] * x_fetched(L, xin, f, u)); };
}
template <class V, bool First>
__device__ inline auto prolong_term(const LevelView<V>& L, const double* xin, const double* z) {
  return [&L, xin, z](const Fetched<V, First, true>& f, int u) {
    return f.val[u] * (x_fetched(L, xin, f, u) + z[f.cl[u]]);
  };
}

// Restriction of cluster c: child_b[c] = sum over its rows of (b - A x), one CSR range.
template <class V, bool First>
struct RestrictFetch {
  bool active = false;  // a regular cluster of this lane group (not past the end, not long)
  int32_t r0 = 0, r1 = 0, k0 = 0, k1 = 0;
  Fetched<V, First, false> nz;
};

template <class V, bool First, int W>
__device__ inline RestrictFetch<V, First> restrict_fetch(const LevelView<V>& L, int32_t c, int lane, bool active) {
  RestrictFetch<V, First> f;
  if (active) {
    f.r0 = L.cptr[c];
    f.r1 = L.cptr[c + 1];
    f.k0 = L.ptr[f.r0];
    f.k1 = L.ptr[f.r1];
    f.active = f.k1 - f.k0 <= kLongCluster;  // else restrict_long
  }
  fetch_nonzeros<V, First, false>(L, f.k0, f.active ? f.k1 : f.k0, lane, W, f.nz);
  return f;
}

template <class V, bool First, int W>
__device__ inline void restrict_item(const LevelView<V>& L, const double* xin, double* child_b, int32_t c, int lane,
                                     const RestrictFetch<V, First>& f) {
  double s = 0;
  if (f.active) {
    for (int32_t i = f.r0 + lane; i < f.r1; i += W) s += L.b[i];
    add_nonzeros(L, f.k0, f.k1, lane, W, f.nz, restrict_term<V, First>(L, xin), s);
  }
  s = group_sum<W>(s);
  if (f.active && lane == 0) child_b[c] = s;
}

// ---- long items: a chunk of at most kChunk nonzeros per block -------------------------------
// The same two phases: a thread fetches the chunk's table entry and its first kPrefetch nonzeros
// (stride blockDim.x; with kBlock threads that is the whole chunk) before the wait.
template <class V, bool First, bool Cluster>
struct ChunkFetch {
  int32_t item = 0, k0 = 0, k1 = 0, first = 0, count = 0;
  Fetched<V, First, Cluster> nz;
};

template <class V, bool First, bool Cluster>
__device__ inline ChunkFetch<V, First, Cluster> chunk_fetch(const LevelView<V>& L, const LongItems& li, int32_t q) {
  ChunkFetch<V, First, Cluster> f;
  f.item = li.item[q];
  f.k0 = li.begin[q];
  f.k1 = li.end[q];
  f.first = li.first[q];
  f.count = li.count[q];
  fetch_nonzeros<V, First, Cluster>(L, f.k0, f.k1, int(threadIdx.x), int(blockDim.x), f.nz);
  return f;
}

// Chunk q of a long item by the whole block, `s` the thread's share of its sum; `finish(item,
// total)` stores the item's result, called once: by this block if the item is one chunk, else by
// the last of its chunks' blocks to finish, which adds their partial sums in chunk order
// (deterministic).
template <class V, bool First, bool Cluster, class Finish>
__device__ inline void long_chunk(const LongItems& li, int32_t q, const ChunkFetch<V, First, Cluster>& f, double s,
                                  Finish finish) {
  __shared__ bool last;
  s = block_sum(s);
  if (f.count == 1) {
    if (threadIdx.x == 0) finish(f.item, s);
    return;
  }
  if (threadIdx.x == 0) {
    li.partial[q] = s;
    __threadfence();
    last = atomicAdd(&li.finished[f.first], 1u) == unsigned(f.count) - 1;
  }
  __syncthreads();
  if (last && threadIdx.x == 0) {
    double total = 0;
    for (int32_t c = f.first; c < f.first + f.count; ++c) total += __ldcg(&li.partial[c]);
    finish(f.item, total);
    li.finished[f.first] = 0;
  }
}

// restrict_item for chunk q of a long cluster (its rows' b summed by the item's first chunk).
template <class V, bool First>
__device__ inline void restrict_long(const LevelView<V>& L, const double* xin, double* child_b, int32_t q,
                                     const ChunkFetch<V, First, false>& f) {
  const int t = int(threadIdx.x), stride = int(blockDim.x);
  double s = 0;
  if (f.first == q)
    for (int32_t i = L.cptr[f.item] + t; i < L.cptr[f.item + 1]; i += stride) s += L.b[i];
  add_nonzeros(L, f.k0, f.k1, t, stride, f.nz, restrict_term<V, First>(L, xin), s);
  long_chunk(L.long_clusters, q, f, s, [&](int32_t item, double total) { child_b[item] = total; });
}

// Prolongation + smoothing of row i, weighted with x (hierarchy.hpp): x' = x + R z (formed per
// entry), xout_i = (1 - w) x_i + w (x'_i + invD_i (b_i - (A x')_i)).
template <class V, bool First>
struct ProlongFetch {
  bool active = false;  // a regular row of this lane group (not past the end, not long)
  int32_t k0 = 0, k1 = 0, cl_i = 0;
  double invd_i = 0;
  Fetched<V, First, true> nz;
};

template <class V, bool First, int W>
__device__ inline ProlongFetch<V, First> prolong_fetch(const LevelView<V>& L, int32_t i, int lane, bool active) {
  ProlongFetch<V, First> f;
  if (active) {
    f.k0 = L.ptr[i];
    f.k1 = L.ptr[i + 1];
    f.active = f.k1 - f.k0 <= kLongRow;  // else prolong_long
    f.cl_i = L.cl[i];
    f.invd_i = double(L.invd[i]);
  }
  fetch_nonzeros<V, First, true>(L, f.k0, f.active ? f.k1 : f.k0, lane, W, f.nz);
  return f;
}

// The row's result from its x_i, x'_i and (A x')_i.
__device__ inline double weighted_smooth(double x, double xp, double invd, double b, double ax, double w) {
  return (1 - w) * x + w * (xp + invd * (b - ax));
}

template <class V, bool First, int W>
__device__ inline void prolong_item(const LevelView<V>& L, const double* xin, const double* z, double* xout,
                                    double w, int32_t i, int lane, const ProlongFetch<V, First>& f) {
  double s = 0;
  if (f.active) {
    add_nonzeros(L, f.k0, f.k1, lane, W, f.nz, prolong_term<V, First>(L, xin, z), s);
  }
  s = group_sum<W>(s);
  if (f.active && lane == 0) {
    const double b = L.b[i], xi = First ? f.invd_i * b : xin[i];
    xout[i] = weighted_smooth(xi, xi + z[f.cl_i], f.invd_i, b, s, w);
  }
}

// prolong_item for chunk q of a long row.
template <class V, bool First>
__device__ inline void prolong_long(const LevelView<V>& L, const double* xin, const double* z, double* xout,
                                    double w, int32_t q, const ChunkFetch<V, First, true>& f) {
  const int t = int(threadIdx.x), stride = int(blockDim.x);
  double s = 0;
  add_nonzeros(L, f.k0, f.k1, t, stride, f.nz, prolong_term<V, First>(L, xin, z), s);
  long_chunk(L.long_rows, q, f, s, [&](int32_t i, double total) {
    const double xi = x_at<V, First>(L, xin, i);
    xout[i] = weighted_smooth(xi, xi + z[L.cl[i]], double(L.invd[i]), L.b[i], total, w);
  });
}

// ---- the Gauss-Seidel smoother (CmgSmoother::sgs) -------------------------------------------
// One colour of a sweep updates its rows in place: x_i += (b_i - (A x)_i) / A_ii, 1 / A_ii =
// 2 invD_i. The colour's rows are not adjacent, so no row reads another's new value: one launch
// is one step of the colour-ordered triangular solve of hierarchy.hpp.

template <class V, int W>
__device__ inline void gauss_seidel_item(const LevelView<V>& L, double* x, int32_t i, int lane, bool active) {
  double s = 0;
  if (active)
    for (int32_t k = L.ptr[i] + lane; k < L.ptr[i + 1]; k += W) s += double(L.val[k]) * x[L.col[k]];
  s = group_sum<W>(s);  // every lane has read x_i (the diagonal term) before lane 0 writes it
  if (active && lane == 0) x[i] += 2 * double(L.invd[i]) * (L.b[i] - s);
}

// A long row (the ground vertex: thousands of nonzeros) by a whole block.
template <class V>
__device__ inline void gauss_seidel_long(const LevelView<V>& L, double* x, int32_t i) {
  double s = 0;
  for (int32_t k = L.ptr[i] + int32_t(threadIdx.x); k < L.ptr[i + 1]; k += int32_t(blockDim.x))
    s += double(L.val[k]) * x[L.col[k]];
  s = block_sum(s);
  if (threadIdx.x == 0) x[i] += 2 * double(L.invd[i]) * (L.b[i] - s);
}

// x = inv b with the dense coarse inverse (row-major n x n). The inverse is fixed: a lane fetches
// its first kCoarseFetch entries of the row before the kernel waits for b (see kPrefetch).
// Entry e = lane + m W goes to sum m % 4 (the last few to sum 0): four independent sums keep four loads in flight per
// lane, where the row is short and one sum would wait out one memory latency per element.
constexpr int kCoarseFetch = 16;

struct CoarseFetch {
  double inv[kCoarseFetch];
};

template <int W>
__device__ inline CoarseFetch coarse_fetch(int32_t n, const double* inv, int32_t i, int lane, bool active) {
  CoarseFetch f;
  const double* row = inv + size_t(active ? i : 0) * n;
#pragma unroll
  for (int m = 0; m < kCoarseFetch; ++m) {
    const int32_t e = lane + m * W;
    f.inv[m] = active && e < n ? row[e] : 0.0;
  }
  return f;
}

template <int W>
__device__ inline void coarse_item(int32_t n, const double* inv, const double* b, double* x, int32_t i, int lane,
                                   bool active, const CoarseFetch& f) {
  double s[4] = {0, 0, 0, 0};
  if (active) {
#pragma unroll
    for (int m = 0; m < kCoarseFetch; ++m)
      if (lane + m * W < n) s[m % 4] += f.inv[m] * b[lane + m * W];
    const double* row = inv + size_t(i) * n;
    int32_t j = lane + kCoarseFetch * W;
    for (; j + 3 * W < n; j += 4 * W)
#pragma unroll
      for (int u = 0; u < 4; ++u) s[u] += row[j + u * W] * b[j + u * W];
    for (; j < n; j += W) s[0] += row[j] * b[j];
  }
  const double sum = group_sum<W>((s[0] + s[1]) + (s[2] + s[3]));
  if (active && lane == 0) x[i] = sum;
}

// ---- one launch per step (large levels) ----------------------------------------------------

// The first `skip_blocks` blocks of a launch work on long items; the rest on the regular ones.
template <int W>
__device__ inline bool grid_item(int32_t count, unsigned skip_blocks, int32_t& item, int& lane) {
  const int64_t t = int64_t(blockIdx.x - skip_blocks) * blockDim.x + threadIdx.x;
  item = int32_t(t / W);
  lane = int(t % W);
  return item < count;
}

// Each kernel below lets the next one be scheduled, fetches its items' fixed data, then waits
// for the kernel before (see kPrefetch); with fetch_early false it waits first (the comparison
// of CmgDeviceOptions::fetch_early).
template <class V, bool First, int W>
__global__ void restrict_kernel(LevelView<V> L, const double* xin, double* child_b, bool fetch_early) {
  allow_dependents();
  if (blockIdx.x < unsigned(L.long_clusters.chunks)) {
    const int32_t q = int32_t(blockIdx.x);
    if (!fetch_early) wait_for_prior_grids();
    const ChunkFetch<V, First, false> f = chunk_fetch<V, First, false>(L, L.long_clusters, q);
    if (fetch_early) wait_for_prior_grids();
    restrict_long<V, First>(L, xin, child_b, q, f);
    return;
  }
  int32_t c;
  int lane;
  const bool active = grid_item<W>(L.clusters, unsigned(L.long_clusters.chunks), c, lane);
  if (!fetch_early) wait_for_prior_grids();
  const RestrictFetch<V, First> f = restrict_fetch<V, First, W>(L, c, lane, active);
  if (fetch_early) wait_for_prior_grids();
  restrict_item<V, First, W>(L, xin, child_b, c, lane, f);
}

template <class V, bool First, int W>
__global__ void prolong_kernel(LevelView<V> L, const double* xin, const double* z, double* xout, double w,
                               bool fetch_early) {
  allow_dependents();
  if (blockIdx.x < unsigned(L.long_rows.chunks)) {
    const int32_t q = int32_t(blockIdx.x);
    if (!fetch_early) wait_for_prior_grids();
    const ChunkFetch<V, First, true> f = chunk_fetch<V, First, true>(L, L.long_rows, q);
    if (fetch_early) wait_for_prior_grids();
    prolong_long<V, First>(L, xin, z, xout, w, q, f);
    return;
  }
  int32_t i;
  int lane;
  const bool active = grid_item<W>(L.rows, unsigned(L.long_rows.chunks), i, lane);
  if (!fetch_early) wait_for_prior_grids();
  const ProlongFetch<V, First> f = prolong_fetch<V, First, W>(L, i, lane, active);
  if (fetch_early) wait_for_prior_grids();
  prolong_item<V, First, W>(L, xin, z, xout, w, i, lane, f);
}

// The colour's rows are rows[0, count): the first long_count blocks take its long rows, one each.
template <class V, int W>
__global__ void gauss_seidel_kernel(LevelView<V> L, const int32_t* rows, int32_t long_count, int32_t count,
                                    double* x) {
  chained_kernel_start();
  if (blockIdx.x < unsigned(long_count)) {
    gauss_seidel_long<V>(L, x, rows[blockIdx.x]);
    return;
  }
  int32_t k;
  int lane;
  const bool active = grid_item<W>(count - long_count, unsigned(long_count), k, lane);
  gauss_seidel_item<V, W>(L, x, active ? rows[long_count + k] : 0, lane, active);
}

// x += R z: a cluster's correction to each of its vertices.
__global__ void prolong_add_kernel(int32_t n, const int32_t* __restrict__ cl, const double* __restrict__ z,
                                   double* __restrict__ x) {
  chained_kernel_start();
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) x[i] += z[cl[i]];
}

template <int W>
__global__ void coarse_kernel(int32_t n, const double* inv, const double* b, double* x, bool fetch_early) {
  allow_dependents();
  int32_t i;
  int lane;
  const bool active = grid_item<W>(n, 0, i, lane);
  if (!fetch_early) wait_for_prior_grids();
  const CoarseFetch f = coarse_fetch<W>(n, inv, i, lane, active);
  if (fetch_early) wait_for_prior_grids();
  coarse_item<W>(n, inv, b, x, i, lane, active, f);
}

// ---- the tail: all remaining levels in one thread-block cluster -----------------------------
// A cluster's blocks run at once on neighbouring SMs and meet at a hardware barrier
// (cluster.sync, far cheaper than a kernel boundary), so each step of the small levels costs a
// barrier instead of a launch, and the coarse solve still reads with several SMs.

// Calls f(item, lane, active) for items [0, count), W lanes each, over the whole cluster; every
// warp runs the same number of rounds, so the lane-group shuffles always have the whole warp.
template <int W, class F>
__device__ inline void block_items(int32_t count, F f) {
  const auto cluster = cg::this_cluster();
  const int t = int(cluster.block_rank() * blockDim.x + threadIdx.x);
  const int group = t / W, lane = t % W, groups = int(cluster.num_blocks() * blockDim.x) / W;
  for (int32_t base = 0; base < count; base += groups) f(base + group, lane, base + group < count);
}

// Long-item chunks spread over the cluster's blocks.
template <class F>
__device__ inline void cluster_chunks(int32_t chunks, F f) {
  const auto cluster = cg::this_cluster();
  for (int32_t q = int32_t(cluster.block_rank()); q < chunks; q += int32_t(cluster.num_blocks())) f(q);
}

template <class V, bool First>
__device__ void tail_restrict(const LevelView<V>& L, const double* xin, double* child_b) {
  block_items<kRestrictLanes>(L.clusters, [&](int32_t c, int lane, bool a) {
    restrict_item<V, First, kRestrictLanes>(L, xin, child_b, c, lane,
                                            restrict_fetch<V, First, kRestrictLanes>(L, c, lane, a));
  });
  cluster_chunks(L.long_clusters.chunks, [&](int32_t q) {
    restrict_long<V, First>(L, xin, child_b, q, chunk_fetch<V, First, false>(L, L.long_clusters, q));
  });
}

template <class V>
__device__ void tail_restrict(const LevelView<V>& L, const LevelView<V>& C, int k) {
  if (k == 0)
    tail_restrict<V, true>(L, nullptr, C.b);
  else
    tail_restrict<V, false>(L, L.x[(k - 1) % 2], C.b);
}

template <class V, bool First>
__device__ void tail_prolong(const LevelView<V>& L, const double* xin, const double* z, double* xout, double w) {
  block_items<kProlongLanes>(L.rows, [&](int32_t i, int lane, bool a) {
    prolong_item<V, First, kProlongLanes>(L, xin, z, xout, w, i, lane,
                                          prolong_fetch<V, First, kProlongLanes>(L, i, lane, a));
  });
  cluster_chunks(L.long_rows.chunks, [&](int32_t q) {
    prolong_long<V, First>(L, xin, z, xout, w, q, chunk_fetch<V, First, true>(L, L.long_rows, q));
  });
}

template <class V>
__device__ void tail_prolong(const LevelView<V>& L, const LevelView<V>& C, int k) {
  if (k == 0)
    tail_prolong<V, true>(L, nullptr, result_of(C), L.x[0], L.weights[0]);
  else
    tail_prolong<V, false>(L, L.x[(k - 1) % 2], result_of(C), L.x[k % 2], L.weights[k]);
}

// The cycle from level `first` to the coarsest, as a loop over an explicit stack of visit
// counters (the recursion of hierarchy.hpp unrolled). Control flow is uniform over the cluster.
template <class V>
__global__ void __launch_bounds__(kTailBlock) tail_kernel(const LevelView<V>* levels, int first, int coarsest,
                                                          const double* coarse_inv) {
  const auto cluster = cg::this_cluster();
  chained_kernel_start();
  int visit[kMaxLevels];
  int l = first;
  visit[l] = 0;
  bool down = true;
  for (;;) {
    const LevelView<V> L = levels[l];
    if (down) {
      if (l == coarsest) {
        block_items<kCoarseLanes>(L.rows, [&](int32_t i, int lane, bool a) {
          coarse_item<kCoarseLanes>(L.rows, coarse_inv, L.b, L.x[0], i, lane, a,
                                    coarse_fetch<kCoarseLanes>(L.rows, coarse_inv, i, lane, a));
        });
        cluster.sync();
        if (l == first) return;
        down = false;
        --l;
        continue;
      }
      tail_restrict(L, levels[l + 1], visit[l]);
      cluster.sync();
      visit[++l] = 0;
      continue;
    }
    tail_prolong(L, levels[l + 1], visit[l]);
    cluster.sync();
    if (++visit[l] < L.repeats) {
      tail_restrict(L, levels[l + 1], visit[l]);
      cluster.sync();
      visit[++l] = 0;
      down = true;
      continue;
    }
    if (l == first) return;
    --l;
  }
}

// ---- lane widths per level -------------------------------------------------------------------
// On a small level a launch holds far fewer threads than the device runs at once, and its time
// is one lane's chain of dependent loads (column, then x) over its share of the item. Widening
// the lane group shortens that chain at no cost while the launch still fits the device in one
// wave: the base width doubles, up to a warp, while items * 2W <= resident threads.
int lanes_for(int64_t items, int base, int64_t resident_threads) {
  int w = base;
  while (w < 32 && items * 2 * w <= resident_threads) w *= 2;
  return w;
}

template <class V, bool First>
auto restrict_kernel_for(int lanes) {
  switch (lanes) {
    case 8: return restrict_kernel<V, First, 8>;
    case 16: return restrict_kernel<V, First, 16>;
    default: return restrict_kernel<V, First, 32>;
  }
}

template <class V, bool First>
auto prolong_kernel_for(int lanes) {
  switch (lanes) {
    case 4: return prolong_kernel<V, First, 4>;
    case 8: return prolong_kernel<V, First, 8>;
    case 16: return prolong_kernel<V, First, 16>;
    default: return prolong_kernel<V, First, 32>;
  }
}

// ---- level 0: the SDD system's vector in and out of the Laplacian's numbering --------------

__global__ void scatter_in(const double* __restrict__ r, const int32_t* __restrict__ map, int32_t n, double* y,
                           int32_t ground, GridSum g) {
  chained_kernel_start();
  double s = 0;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    y[map[i]] = r[i];
    s += r[i];
  }
  double total;
  if (grid_sum(g, s, total)) y[ground] = -total;
}

__global__ void gather_out(const double* __restrict__ y, const int32_t* __restrict__ map, int32_t n, int32_t ground,
                           double* __restrict__ z) {
  chained_kernel_start();
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) z[i] = y[map[i]] - y[ground];
}

// ---- upload -------------------------------------------------------------------------------

// cl[i] = the cluster of row i, from the cluster ranges: one thread per cluster writes its rows.
__global__ void cluster_of_rows(const int32_t* __restrict__ cptr, int32_t clusters, int32_t* __restrict__ cl) {
  const int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c < clusters)
    for (int32_t i = cptr[c]; i < cptr[c + 1]; ++i) cl[i] = int32_t(c);
}

// ---- host side -----------------------------------------------------------------------------

// The device arrays behind a LongItems.
struct LongItemBuffers {
  DeviceBuffer<int32_t> item, begin, end, first, count;
  DeviceBuffer<double> partial;
  DeviceBuffer<unsigned> finished;

  // items: (index, first nonzero, end nonzero) of every long item.
  LongItems upload(const std::vector<std::array<int32_t, 3>>& items) {
    std::vector<int32_t> it, b, e, f, n;
    for (const auto& [index, k0, k1] : items) {
      const int32_t chunks = (k1 - k0 + kChunk - 1) / kChunk, at = int32_t(it.size());
      for (int32_t c = 0; c < chunks; ++c) {
        it.push_back(index);
        b.push_back(k0 + c * kChunk);
        e.push_back(std::min(k1, k0 + (c + 1) * kChunk));
        f.push_back(at);
        n.push_back(chunks);
      }
    }
    item = DeviceBuffer<int32_t>(it);
    begin = DeviceBuffer<int32_t>(b);
    end = DeviceBuffer<int32_t>(e);
    first = DeviceBuffer<int32_t>(f);
    count = DeviceBuffer<int32_t>(n);
    partial = DeviceBuffer<double>(it.size());
    finished = DeviceBuffer<unsigned>(it.size());
    if (!it.empty()) PGSIM_CUDA(cudaMemset(finished.data(), 0, it.size() * sizeof(unsigned)));
    return LongItems{int32_t(it.size()), item.data(),    begin.data(),   end.data(),
                     first.data(),       count.data(),   partial.data(), finished.data()};
  }
};

template <class V>
struct LevelBuffers {
  LongItemBuffers long_rows, long_clusters;
  // In the hierarchy's DeviceArena:
  int32_t *ptr = nullptr, *col = nullptr, *cptr = nullptr, *cl = nullptr;
  V *val = nullptr, *invd = nullptr;
  double *b = nullptr, *x0 = nullptr, *x1 = nullptr, *weights = nullptr;
  std::vector<double> host_weights;  // CmgLevel::weights, 1 where it is empty: the grid kernels' arguments
  // sgs: colour k is color_rows[color_ptr[k], color_ptr[k+1]), its first color_long[k] rows long.
  DeviceBuffer<int32_t> color_rows;
  std::vector<int32_t> color_ptr, color_long;
};

// The level's colouring for the device: within each colour the long rows (a block each) first.
template <class V>
void upload_colors(const CmgLevel& lev, LevelBuffers<V>& B) {
  if (lev.color_ptr.empty() || lev.color_ptr.back() != lev.A.rows || int32_t(lev.color_rows.size()) != lev.A.rows)
    throw std::invalid_argument("CMG level of " + std::to_string(lev.A.rows) +
                                " rows has no valid Gauss-Seidel colouring (use_gauss_seidel)");
  const auto& ptr = lev.A.ptr;
  auto is_long = [&](int32_t i) { return ptr[i + 1] - ptr[i] > kLongRow; };
  std::vector<int32_t> rows(lev.color_rows);
  B.color_ptr = lev.color_ptr;
  B.color_long.clear();
  for (size_t k = 0; k + 1 < lev.color_ptr.size(); ++k) {
    const auto first = rows.begin() + lev.color_ptr[k], last = rows.begin() + lev.color_ptr[k + 1];
    B.color_long.push_back(int32_t(std::stable_partition(first, last, is_long) - first));
  }
  B.color_rows = DeviceBuffer<int32_t>(rows);
}

// What the constructor needs to know of a level, from a host or a device hierarchy.
struct LevelShape {
  int32_t rows = 0;
  int64_t nnz = 0;
  int32_t clusters = 0;  // the next level's rows (0 on the coarsest)
  int repeats = 1;
  const std::vector<double>* weights = nullptr;  // CmgLevel::weights
};

inline int64_t nnz_of(const CsrMatrix& A) { return A.nnz(); }
inline int64_t nnz_of(const DeviceCsr& A) { return A.nnz; }

template <class Level>
std::vector<LevelShape> shapes_of(const std::vector<Level>& levels) {
  std::vector<LevelShape> shapes;
  for (const Level& lev : levels)
    shapes.push_back({lev.A.rows, nnz_of(lev.A), std::max(int32_t(lev.cluster_ptr.size()) - 1, 0),
                      lev.repeats, &lev.weights});
  return shapes;
}

// Level rows and clusters longer than kLongRow / kLongCluster nonzeros, as (index, first
// nonzero, end nonzero): items i whose nonzeros are ptr[range[i]] to ptr[range[i + 1]] (range
// null: row i's). With `out` null only counted.
__global__ void long_ranges_kernel(int32_t items, const int32_t* ptr, const int32_t* range, int32_t longer_than,
                                   std::array<int32_t, 3>* out, int32_t* count) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= items) return;
  const int32_t k0 = ptr[range ? range[i] : i], k1 = ptr[range ? range[i + 1] : i + 1];
  if (k1 - k0 <= longer_than) return;
  const int32_t at = atomicAdd(count, 1);
  if (out) out[at] = {int32_t(i), k0, k1};
}

// long_ranges_kernel's items of a level on the device, ascending.
std::vector<std::array<int32_t, 3>> long_ranges(int32_t items, const int32_t* ptr, const int32_t* range,
                                                int32_t longer_than) {
  if (items == 0) return {};
  DeviceBuffer<int32_t> count(1);
  PGSIM_CUDA(cudaMemset(count.data(), 0, sizeof(int32_t)));
  long_ranges_kernel<<<blocks_for(items), kBlock>>>(items, ptr, range, longer_than, nullptr, count.data());
  PGSIM_CUDA_LAUNCH();
  int32_t found = 0;
  count.download(&found);
  if (found == 0) return {};
  DeviceBuffer<std::array<int32_t, 3>> list{size_t(found)};
  PGSIM_CUDA(cudaMemset(count.data(), 0, sizeof(int32_t)));
  long_ranges_kernel<<<blocks_for(items), kBlock>>>(items, ptr, range, longer_than, list.data(), count.data());
  PGSIM_CUDA_LAUNCH();
  std::vector<std::array<int32_t, 3>> host = list.download();
  std::sort(host.begin(), host.end());
  return host;
}

template <class V>
class DeviceCmg final : public DevicePreconditioner {
 public:
  // From the host's hierarchy: every level uploaded.
  DeviceCmg(const CmgHierarchy& h, const CmgDeviceOptions& opt) : DeviceCmg(opt, h.smoother == CmgSmoother::sgs) {
    const std::vector<LevelShape> shapes = shapes_of(h.levels);
    check(h.n, h.level0_of_unknown.size(), shapes);
    const std::vector<double> inverse = dense_coarse_inverse(h.coarse, h.levels.back().A.rows);
    times_.coarse_inverse += phase_.lap();
    ground_ = h.level0_ground;
    map_ = DeviceBuffer<int32_t>(size_t(n_));
    allocate(shapes, true);
    HostStaging staging;
    staging.upload(map_.data(), h.level0_of_unknown);
    for (int l = 0; l < int(shapes.size()); ++l) {
      const CmgLevel& lev = h.levels[size_t(l)];
      LevelBuffers<V>& B = bufs_[size_t(l)];
      staging.upload(B.ptr, lev.A.ptr);
      staging.upload(B.col, lev.A.col);
      staging.upload(B.val, lev.A.val);
      staging.upload(B.invd, lev.inv_diag);
      if (l < coarsest_) staging.upload(B.cptr, lev.cluster_ptr);
    }
    upload_common(shapes, inverse, staging.stream(),
                  [&](double* dst, const std::vector<double>& v) { staging.upload(dst, v); });
    for (int l = 0; sgs_ && l < coarsest_; ++l) {
      upload_colors(h.levels[size_t(l)], bufs_[size_t(l)]);
      views_[size_t(l)].color_rows = bufs_[size_t(l)].color_rows.data();
    }
    staging.finish();
    times_.copy += phase_.lap();
    find_long_items(shapes);
    times_.long_items += phase_.lap();
    finish(shapes, opt);
  }

  // From a hierarchy built on the device (gpu/cmg_build.hpp): its levels' arrays kept where they
  // are, only the cycle's vectors allocated. Double values only.
  DeviceCmg(DeviceCmgHierarchy&& h, const CmgDeviceOptions& opt) : DeviceCmg(opt, false) {
    static_assert(std::is_same_v<V, double>, "a hierarchy built on the device has double values");
    built_ = std::move(h);
    const std::vector<LevelShape> shapes = shapes_of(built_.levels);  // points at built_'s weights
    check(built_.n, built_.level0_of_unknown.size(), shapes);
    const std::vector<double> inverse = dense_coarse_inverse(built_.coarse, built_.levels.back().A.rows);
    times_.coarse_inverse += phase_.lap();
    ground_ = built_.level0_ground;
    map_ = std::move(built_.level0_of_unknown);
    allocate(shapes, false);
    for (int l = 0; l < int(shapes.size()); ++l) {
      DeviceCmgLevel& lev = built_.levels[size_t(l)];
      LevelBuffers<V>& B = bufs_[size_t(l)];
      LevelView<V>& v = views_[size_t(l)];
      v.ptr = B.ptr = lev.A.ptr.data();
      v.col = B.col = lev.A.col.data();
      v.val = B.val = lev.A.val.data();
      v.invd = B.invd = lev.inv_diag.data();
      v.cptr = B.cptr = lev.cluster_ptr.data();
    }
    // A few weights and the coarse inverse: plain copies (a HostStaging's pinned buffers cost more).
    upload_common(shapes, inverse, nullptr, [](double* dst, const std::vector<double>& v) {
      PGSIM_CUDA(cudaMemcpy(dst, v.data(), v.size() * sizeof(double), cudaMemcpyHostToDevice));
    });
    PGSIM_CUDA(cudaDeviceSynchronize());
    times_.copy += phase_.lap();
    find_long_items(shapes);
    times_.long_items += phase_.lap();
    finish(shapes, opt);
  }

  ~DeviceCmg() override {
    for (auto& t : timers_) {
      cudaEventDestroy(t.start);
      cudaEventDestroy(t.stop);
    }
  }

  void apply(const double* r, double* z, cudaStream_t stream) override {
    const LevelView<V>& top = views_[0];
    launch_after(pdl_, scatter_in, reduce_blocks(n_), kBlock, stream, r, map_.data(), n_, top.b, ground_,
                 GridSum{partials_.data(), finished_.data()});
    PGSIM_CUDA_LAUNCH();
    used_timers_ = 0;
    cycle(0, stream);
    const double* y = result_of(top);
    if (n_) launch_after(pdl_, gather_out, blocks_for(n_), kBlock, stream, y, map_.data(), n_, ground_, z);
    PGSIM_CUDA_LAUNCH();
    if (profile_) collect_timers(stream);
  }
  std::string name() const override { return "cmg"; }
  std::vector<LevelStats> levels() const override { return stats_; }

 private:
  struct Timer {
    int level;
    cudaEvent_t start, stop;
  };

  // Records the launches of `launch` on `stream` against `level` when profiling.
  template <class F>
  void timed(int level, cudaStream_t stream, F launch) {
    if (!profile_) {
      launch();
      return;
    }
    if (used_timers_ == timers_.size()) {
      Timer t{level, nullptr, nullptr};
      PGSIM_CUDA(cudaEventCreate(&t.start));
      PGSIM_CUDA(cudaEventCreate(&t.stop));
      timers_.push_back(t);
    }
    Timer& t = timers_[used_timers_++];
    t.level = level;
    PGSIM_CUDA(cudaEventRecord(t.start, stream));
    launch();
    PGSIM_CUDA(cudaEventRecord(t.stop, stream));
  }

  void collect_timers(cudaStream_t stream) {
    PGSIM_CUDA(cudaStreamSynchronize(stream));
    for (size_t k = 0; k < used_timers_; ++k) {
      float ms = 0;
      PGSIM_CUDA(cudaEventElapsedTime(&ms, timers_[k].start, timers_[k].stop));
      stats_[size_t(timers_[k].level)].seconds += ms * 1e-3;
    }
  }

  // What both constructors begin with: the options' checks, the device's size.
  DeviceCmg(const CmgDeviceOptions& opt, bool sgs)
      : sgs_(sgs), profile_(opt.profile), pdl_(opt.dependent_launches), fetch_early_(opt.fetch_early),
        tail_blocks_(opt.tail_blocks), partials_(kReduceBlocks), finished_(1) {
    if (tail_blocks_ < 1 || tail_blocks_ > 8) throw std::invalid_argument("tail_blocks must be 1 to 8");
    PGSIM_CUDA(cudaMemset(finished_.data(), 0, sizeof(unsigned)));
    int device = 0, sms = 0, threads_per_sm = 0;
    PGSIM_CUDA(cudaGetDevice(&device));
    PGSIM_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    PGSIM_CUDA(cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device));
    resident_ = opt.widen_lanes ? int64_t(sms) * threads_per_sm : 0;
  }

  // The hierarchy's shape against the system of n unknowns (map: level0_of_unknown's size).
  void check(int32_t n, size_t map, const std::vector<LevelShape>& shapes) {
    const int L = int(shapes.size());
    if (L == 0 || L > kMaxLevels) throw std::invalid_argument("CMG hierarchy has " + std::to_string(L) + " levels");
    if (shapes[0].rows != n + 1 || map != size_t(n))
      throw std::invalid_argument("CMG level 0 does not match the system: " + std::to_string(shapes[0].rows) +
                                  " vertices for " + std::to_string(n) + " unknowns");
    for (int l = 0; l + 1 < L; ++l)
      if (shapes[size_t(l)].clusters != shapes[size_t(l) + 1].rows)
        throw std::invalid_argument("CMG level " + std::to_string(l) + ": cluster_ptr does not match level " +
                                    std::to_string(l + 1));
    n_ = n;
    coarsest_ = L - 1;
    bufs_.resize(size_t(L));
    views_.resize(size_t(L));
  }

  // Every level's arrays in one arena (sized by a first pass): the cycle's vectors, and with
  // `fixed` the level's matrix, inverse diagonal and cluster ranges too.
  void allocate(const std::vector<LevelShape>& shapes, bool fixed) {
    DeviceArena sizing;
    for (size_t l = 0; l < shapes.size(); ++l) allocate_level(shapes[l], int(l), fixed, sizing, bufs_[l], views_[l]);
    arena_ = DeviceArena(sizing.bytes());
    for (size_t l = 0; l < shapes.size(); ++l) allocate_level(shapes[l], int(l), fixed, arena_, bufs_[l], views_[l]);
    times_.allocate += phase_.lap();
  }

  // Level l's arrays taken from `arena` (contents written later) and the view of them.
  void allocate_level(const LevelShape& s, int l, bool fixed, DeviceArena& arena, LevelBuffers<V>& B,
                      LevelView<V>& v) {
    const size_t rows = size_t(s.rows);
    if (fixed) {
      B.ptr = arena.take<int32_t>(rows + 1);
      B.col = arena.take<int32_t>(size_t(s.nnz));
      B.val = arena.take<V>(size_t(s.nnz));
      B.invd = arena.take<V>(rows);
    }
    B.b = arena.take<double>(rows);
    B.x0 = arena.take<double>(rows);
    v.rows = s.rows;
    v.ptr = B.ptr;
    v.col = B.col;
    v.val = B.val;
    v.invd = B.invd;
    v.b = B.b;
    v.x[0] = v.x[1] = B.x0;
    if (l == coarsest_) return;
    if (fixed) B.cptr = arena.take<int32_t>(size_t(s.clusters) + 1);
    B.cl = arena.take<int32_t>(rows);
    v.repeats = s.repeats < 1 ? 1 : s.repeats;
    if (v.repeats > 1 && !sgs_) {  // Jacobi alternates between two vectors; Gauss-Seidel works in place in one
      B.x1 = arena.take<double>(rows);
      v.x[1] = B.x1;
    }
    B.weights = arena.take<double>(size_t(v.repeats));
    v.weights = B.weights;
    v.cptr = B.cptr;
    v.cl = B.cl;
    v.clusters = s.clusters;
    v.restrict_lanes = lanes_for(v.clusters, kRestrictLanes, resident_);
    v.prolong_lanes = lanes_for(v.rows, kProlongLanes, resident_);
  }

  // Both constructors' uploads once the levels' arrays are in place: the weights and the coarse
  // inverse through `upload(device, host)`, each row's cluster (from the ranges) on `stream`.
  template <class Upload>
  void upload_common(const std::vector<LevelShape>& shapes, const std::vector<double>& inverse, cudaStream_t stream,
                     Upload upload) {
    for (int l = 0; l < coarsest_; ++l) {
      const LevelShape& s = shapes[size_t(l)];
      LevelBuffers<V>& B = bufs_[size_t(l)];
      const int repeats = views_[size_t(l)].repeats;
      if (!s.weights->empty() && (sgs_ || s.weights->size() != size_t(repeats)))
        throw std::invalid_argument("CMG level " + std::to_string(l) + ": " + std::to_string(s.weights->size()) +
                                    " weights for " + std::to_string(s.repeats) + " repeats" +
                                    (sgs_ ? " with the Gauss-Seidel smoother" : ""));
      B.host_weights = s.weights->empty() ? std::vector<double>(size_t(repeats), 1.0) : *s.weights;
      upload(B.weights, B.host_weights);
      cluster_of_rows<<<blocks_for(s.clusters), kBlock, 0, stream>>>(B.cptr, s.clusters, B.cl);
      PGSIM_CUDA_LAUNCH();
    }
    coarse_inv_ = DeviceBuffer<double>(inverse.size());
    upload(coarse_inv_.data(), inverse);
    times_.copy += phase_.lap();
  }

  // Level l's rows with more than kLongRow and clusters with more than kLongCluster nonzeros
  // (index, first nonzero, end nonzero; ascending), to the device in chunks.
  // Each level's rows and clusters of more than kLongRow / kLongCluster nonzeros, found from its
  // arrays on the device (both constructors: they are there by then).
  void find_long_items(const std::vector<LevelShape>& shapes) {
    for (int l = 0; l < coarsest_; ++l) {
      LevelBuffers<V>& B = bufs_[size_t(l)];
      views_[size_t(l)].long_rows = B.long_rows.upload(long_ranges(shapes[size_t(l)].rows, B.ptr, nullptr, kLongRow));
      views_[size_t(l)].long_clusters =
          B.long_clusters.upload(long_ranges(shapes[size_t(l)].clusters, B.ptr, B.cptr, kLongCluster));
    }
    PGSIM_CUDA(cudaDeviceSynchronize());
  }

  // Both constructors' end: the levels' statistics, where the tail kernel starts, the views on
  // the device.
  void finish(const std::vector<LevelShape>& shapes, const CmgDeviceOptions& opt) {
    for (int l = 0; l <= coarsest_; ++l) {
      const LevelView<V>& v = views_[size_t(l)];
      stats_.push_back(LevelStats{v.rows, shapes[size_t(l)].nnz, v.repeats, 0.0, 0.0});
    }
    // The tail starts at the first level from which every level is small. The cluster's few
    // blocks read the whole dense coarse inverse, so a coarsest level above tail_max_coarse rows
    // gets a grid launch instead (no tail).
    // The tail kernel runs the Jacobi cycle only: with Gauss-Seidel every level gets its own
    // launches (one per colour and sweep).
    tail_first_ = views_[size_t(coarsest_)].rows <= opt.tail_max_coarse && !sgs_ ? coarsest_ : coarsest_ + 1;
    while (tail_first_ <= coarsest_ && tail_first_ > 0 && views_[size_t(tail_first_) - 1].rows <= opt.tail_rows)
      --tail_first_;
    views_dev_ = DeviceBuffer<LevelView<V>>(views_);
    double visits = 1;
    for (auto& st : stats_) {
      st.visits = visits;
      visits *= st.repeats;
    }
    times_.total = total_.lap();
    if (opt.upload_times) *opt.upload_times = times_;
  }

  void cycle(int l, cudaStream_t stream) {
    const LevelView<V>& L = views_[size_t(l)];
    if (l >= tail_first_) {
      // One block for the rest of the hierarchy; its time is booked on its first level.
      timed(l, stream, [&] {
        cudaLaunchConfig_t config{};
        config.gridDim = dim3(unsigned(tail_blocks_));
        config.blockDim = dim3(kTailBlock);
        config.stream = stream;
        cudaLaunchAttribute attributes[2]{};
        attributes[0].id = cudaLaunchAttributeClusterDimension;
        attributes[0].val.clusterDim.x = unsigned(tail_blocks_);
        attributes[0].val.clusterDim.y = attributes[0].val.clusterDim.z = 1;
        attributes[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attributes[1].val.programmaticStreamSerializationAllowed = 1;
        config.attrs = attributes;
        config.numAttrs = pdl_ ? 2 : 1;
        PGSIM_CUDA(cudaLaunchKernelEx(&config, tail_kernel<V>, static_cast<const LevelView<V>*>(views_dev_.data()), l,
                                      coarsest_, static_cast<const double*>(coarse_inv_.data())));
      });
      PGSIM_CUDA_LAUNCH();
      return;
    }
    if (l == coarsest_) {
      timed(l, stream, [&] {
        launch_after(pdl_, coarse_kernel<kCoarseLanes>, blocks_for(int64_t(L.rows) * kCoarseLanes), kBlock, stream,
                     L.rows, static_cast<const double*>(coarse_inv_.data()), static_cast<const double*>(L.b), L.x[0],
                     fetch_early_);
      });
      PGSIM_CUDA_LAUNCH();
      return;
    }
    if (sgs_) {
      sgs_cycle(l, stream);
      return;
    }
    const LevelView<V>& C = views_[size_t(l) + 1];
    for (int k = 0; k < L.repeats; ++k) {
      const double* xin = k == 0 ? nullptr : L.x[(k - 1) % 2];
      timed(l, stream, [&] {
        const int w = L.restrict_lanes;
        auto kernel = k == 0 ? restrict_kernel_for<V, true>(w) : restrict_kernel_for<V, false>(w);
        launch_after(pdl_, kernel, L.long_clusters.chunks + blocks_for(int64_t(L.clusters) * w), kBlock, stream, L, xin,
                     C.b, fetch_early_);
      });
      PGSIM_CUDA_LAUNCH();
      cycle(l + 1, stream);
      const double* zc = result_of(C);
      timed(l, stream, [&] {
        const int w = L.prolong_lanes;
        auto kernel = k == 0 ? prolong_kernel_for<V, true>(w) : prolong_kernel_for<V, false>(w);
        launch_after(pdl_, kernel, L.long_rows.chunks + blocks_for(int64_t(L.rows) * w), kBlock, stream, L, xin, zc,
                     L.x[k % 2], bufs_[size_t(l)].host_weights[size_t(k)], fetch_early_);
      });
      PGSIM_CUDA_LAUNCH();
    }
  }

  // The Gauss-Seidel cycle of hierarchy.hpp on a non-coarsest level; x is L.x[0] (= L.x[1]).
  void sgs_cycle(int l, cudaStream_t stream) {
    const LevelView<V>& L = views_[size_t(l)];
    const LevelView<V>& C = views_[size_t(l) + 1];
    double* x = L.x[0];
    timed(l, stream, [&] { PGSIM_CUDA(cudaMemsetAsync(x, 0, size_t(L.rows) * sizeof(double), stream)); });
    for (int k = 0; k < L.repeats; ++k) {
      timed(l, stream, [&] {
        sweep(l, true, stream);
        const int w = L.restrict_lanes;
        launch_after(pdl_, restrict_kernel_for<V, false>(w), L.long_clusters.chunks + blocks_for(int64_t(L.clusters) * w),
                     kBlock, stream, L, static_cast<const double*>(x), C.b, fetch_early_);
        PGSIM_CUDA_LAUNCH();
      });
      cycle(l + 1, stream);
      timed(l, stream, [&] {
        launch_after(pdl_, prolong_add_kernel, blocks_for(L.rows), kBlock, stream, L.rows, L.cl,
                     static_cast<const double*>(result_of(C)), x);
        PGSIM_CUDA_LAUNCH();
        sweep(l, false, stream);
      });
    }
  }

  // A Gauss-Seidel sweep over the colours of level l, first to last (forward) or last to first.
  void sweep(int l, bool forward, cudaStream_t stream) {
    const LevelView<V>& L = views_[size_t(l)];
    const LevelBuffers<V>& B = bufs_[size_t(l)];
    const int colors = int(B.color_ptr.size()) - 1;
    for (int q = 0; q < colors; ++q) {
      const size_t k = size_t(forward ? q : colors - 1 - q);
      const int32_t count = B.color_ptr[k + 1] - B.color_ptr[k], long_count = B.color_long[k];
      if (count == 0) continue;  // (greedy colourings have none; a launch of no blocks is an error)
      launch_after(pdl_, gauss_seidel_kernel<V, kSmoothLanes>,
                   unsigned(long_count) + blocks_for(int64_t(count - long_count) * kSmoothLanes), kBlock, stream, L,
                   L.color_rows + B.color_ptr[k], long_count, count, L.x[0]);
      PGSIM_CUDA_LAUNCH();
    }
  }

  int32_t n_ = 0, ground_ = 0;
  bool sgs_;
  bool profile_;
  bool pdl_;  // launches as programmatic dependent launches (CmgDeviceOptions::dependent_launches)
  bool fetch_early_;  // CmgDeviceOptions::fetch_early
  int coarsest_ = 0, tail_first_ = 0, tail_blocks_ = 1;
  DeviceBuffer<int32_t> map_;
  DeviceBuffer<double> partials_;
  DeviceBuffer<unsigned> finished_;
  DeviceArena arena_;  // every level's arrays but the long-item tables
  std::vector<LevelBuffers<V>> bufs_;
  std::vector<LevelView<V>> views_;
  DeviceBuffer<LevelView<V>> views_dev_;
  DeviceBuffer<double> coarse_inv_;
  std::vector<LevelStats> stats_;
  std::vector<Timer> timers_;
  size_t used_timers_ = 0;
  int64_t resident_ = 0;      // threads the device runs at once (lanes_for), 0 for the fixed lane widths
  DeviceCmgHierarchy built_;  // a hierarchy built on the device: its levels' arrays, which the views point into
  CmgUploadTimes times_;
  Stopwatch total_, phase_;
};

}  // namespace

void load_cmg_kernels() {
  using V = double;
  load_kernels(restrict_kernel<V, true, 8>, restrict_kernel<V, true, 16>, restrict_kernel<V, true, 32>,
               restrict_kernel<V, false, 8>, restrict_kernel<V, false, 16>, restrict_kernel<V, false, 32>,
               prolong_kernel<V, true, 4>, prolong_kernel<V, true, 8>, prolong_kernel<V, true, 16>,
               prolong_kernel<V, true, 32>, prolong_kernel<V, false, 4>, prolong_kernel<V, false, 8>,
               prolong_kernel<V, false, 16>, prolong_kernel<V, false, 32>, gauss_seidel_kernel<V, kSmoothLanes>,
               prolong_add_kernel, coarse_kernel<kCoarseLanes>, tail_kernel<V>, scatter_in, gather_out,
               cluster_of_rows, long_ranges_kernel);
}

std::unique_ptr<DevicePreconditioner> make_device_cmg(const CmgHierarchy& h, const CmgDeviceOptions& options) {
  if (options.float_values) return std::make_unique<DeviceCmg<float>>(h, options);
  return std::make_unique<DeviceCmg<double>>(h, options);
}

std::unique_ptr<DevicePreconditioner> make_device_cmg(DeviceCmgHierarchy h, const CmgDeviceOptions& options) {
  if (options.float_values) throw std::invalid_argument("a CMG hierarchy built on the device has double values only");
  return std::make_unique<DeviceCmg<double>>(std::move(h), options);
}

}  // namespace pgsim::gpu
