// CMG levels coarsened on the device (cmg_coarsen.hpp). Each step is the host's of the same
// name (cmg/laplacian.cpp, cmg/clustering.cpp, cmg/galerkin.cpp), one thread per vertex, row or
// entry, on the default stream; a long row is a block's (gpu/row_kernels.cuh).
#include "gpu/cmg_coarsen.hpp"

#include <cub/block/block_reduce.cuh>
#include <cuda_runtime.h>

#include <cmath>
#include <stdexcept>
#include <utility>

#include "gpu/device_algorithms.cuh"
#include "gpu/device_buffer.hpp"
#include "gpu/host_staging.hpp"
#include "gpu/launch.cuh"
#include "gpu/row_kernels.cuh"
#include "mna/stopwatch.hpp"

namespace pgsim::gpu {
namespace {

// The first k of the largest positive weight(k), or -1 where none is positive.
struct Heaviest {
  double w;
  int32_t k;
};
struct HeavierFirst {
  __device__ Heaviest operator()(const Heaviest& a, const Heaviest& b) const {
    return b.w > a.w || (b.w == a.w && unsigned(b.k) < unsigned(a.k)) ? b : a;  // -1: after every k
  }
};
template <bool kLong, class Weight>
__device__ Heaviest first_heaviest(int32_t begin, int32_t end, Weight weight) {
  Heaviest best{0.0, -1};
  const int32_t first = kLong ? begin + int32_t(threadIdx.x) : begin, step = kLong ? int32_t(blockDim.x) : 1;
  for (int32_t k = first; k < end; k += step) {
    const double w = weight(k);
    if (w > best.w) best = {w, k};
  }
  if constexpr (kLong) {
    using Reduce = cub::BlockReduce<Heaviest, kBlock>;
    __shared__ typename Reduce::TempStorage storage;
    best = Reduce(storage).Reduce(best, HeavierFirst());
  }
  return best;
}

// The kernels below read a level's rows (a DeviceCsrView, columns ascending) for its
// off-diagonals: level 0's stores only those (grounded_laplacian_on_device), the coarser levels
// a diagonal too, which every kernel passes over as the host's for_each_off_diagonal does: its
// weight -a_vv is not positive (never a heaviest edge, +0.0 in a weighted degree), its vertex is
// no child of a weak vertex (which has a parent), and its cluster is its own (never gathered).

// ---- level 0: the grounded Laplacian of G (GroundedSdd), its off-diagonals stored -------------

// Row i's excess e_i = G_ii - sum_j |G_ij| (summed in column order, as grounded_sdd), its
// off-diagonal count (with the ground edge) and whether it has a ground edge.
template <bool kLong>
__global__ void excess_kernel(const int32_t* long_items, DeviceCsrView G, double* excess, int32_t* count,
                              int32_t* grounded) {
  const int64_t i = item_index<kLong>(long_items);
  if (!kLong && (i >= G.rows || is_long(G.ptr, int32_t(i)))) return;
  auto off_diagonal = [&](int32_t k) { return G.col[k] != i && G.val[k] != 0; };
  // The diagonal, the one entry of column i (0 if none), as the only term of a sum.
  const double diag = ordered_sum<kLong>(G.ptr[i], G.ptr[i + 1], 0.0, [&](int32_t k) { return G.col[k] == i ? G.val[k] : 0.0; });
  const double off =
      ordered_sum<kLong>(G.ptr[i], G.ptr[i + 1], 0.0, [&](int32_t k) { return off_diagonal(k) ? fabs(G.val[k]) : 0.0; });
  const int32_t entries = count_if<kLong>(G.ptr[i], G.ptr[i + 1], off_diagonal);
  if (!writes<kLong>()) return;
  const double e = diag - off;
  excess[i] = e;
  count[i] = entries + (e > 0 ? 1 : 0);
  grounded[i] = e > 0 ? 1 : 0;
}

// The ground row's length: the rows with a ground edge (the scan of `grounded` at n).
__global__ void ground_count_kernel(int32_t n, const int32_t* ground_at, int32_t* count) { count[n] = ground_at[n]; }

// Row i's off-diagonals -|G_ij| in G's order, then -e_i to the ground (the largest column); and
// -e_i in the ground row at i's place among the grounded rows.
template <bool kLong>
__global__ void level0_kernel(const int32_t* long_items, DeviceCsrView G, const double* excess,
                              const int32_t* ground_at, const int32_t* ptr, int32_t* col, double* val) {
  const int64_t i = item_index<kLong>(long_items);
  const int32_t n = G.rows;
  if (!kLong && (i >= n || is_long(G.ptr, int32_t(i)))) return;
  const int32_t out = ordered_writes<kLong>(
      G.ptr[i], G.ptr[i + 1], ptr[i], [&](int32_t k) { return G.col[k] != i && G.val[k] != 0; },
      [&](int32_t k, int32_t at) {
        col[at] = G.col[k];
        val[at] = -fabs(G.val[k]);
      });
  if (!writes<kLong>()) return;
  const double e = excess[i];
  if (e > 0) {
    col[out] = n;
    val[out] = -e;
    const int32_t at = ptr[n] + ground_at[i];
    col[at] = int32_t(i);
    val[at] = -e;
  }
}

// ---- the clustering (cluster_vertices) -------------------------------------------------------

// Appends value to list (its length at *count), one atomic per warp: the order is not kept.
__device__ inline void append(int32_t* list, int32_t* count, int32_t value) {
  const unsigned active = __activemask();
  const int lane = int(threadIdx.x % 32), leader = __ffs(active) - 1;
  int32_t base = 0;
  if (lane == leader) base = atomicAdd(count, __popc(active));
  base = __shfl_sync(active, base, leader);
  list[base + __popc(active & ((1u << lane) - 1))] = value;
}

// Heaviest neighbour (the first of equal weights: columns ascend), its weight, the weighted degree.
template <bool kLong>
__global__ void heaviest_kernel(const int32_t* long_items, DeviceCsrView g, int32_t* chosen, double* heaviest,
                                double* volume) {
  const int64_t v = item_index<kLong>(long_items);
  if (!kLong && (v >= g.rows || is_long(g.ptr, int32_t(v)))) return;
  auto weight = [&](int32_t k) { return -g.val[k]; };
  const double vol = ordered_sum<kLong>(g.ptr[v], g.ptr[v + 1], 0.0, [&](int32_t k) { return weight(k) > 0 ? weight(k) : 0.0; });
  const Heaviest best = first_heaviest<kLong>(g.ptr[v], g.ptr[v + 1], weight);
  if (!writes<kLong>()) return;
  chosen[v] = best.k < 0 ? int32_t(v) : g.col[best.k];
  heaviest[v] = best.w;
  volume[v] = vol;
}

// Two vertices that chose each other: the lower index becomes the root.
__global__ void mutual_kernel(int32_t n, const int32_t* chosen, int32_t* parent) {
  const int64_t v = thread_index();
  if (v >= n) return;
  const int32_t p = chosen[v];
  parent[v] = p != v && chosen[p] == v && v < p ? int32_t(v) : p;
}

// A vertex whose forest edges carry under kClusterWeakShare of its weighted degree becomes a root:
// its children's edges summed in column order with its own edge at its column's place, as the host does.
template <bool kLong>
__global__ void weak_kernel(const int32_t* long_items, DeviceCsrView g, const int32_t* parent, const double* heaviest,
                            const double* volume, int32_t* new_parent) {
  const int64_t v = item_index<kLong>(long_items);
  if (!kLong && (v >= g.rows || is_long(g.ptr, int32_t(v)))) return;
  const double threshold = kClusterWeakShare * volume[v];
  bool weak = parent[v] != v && heaviest[v] < threshold;
  if (weak) {  // the same for every thread of a block: v's own values
    const int32_t begin = g.ptr[v], end = g.ptr[v + 1];
    const int32_t own = lower_bound(g.col, begin, end, int32_t(v) + 1);  // the own edge's place: before the first column above v
    auto child = [&](int32_t k) {
      const int32_t u = g.col[k];
      return parent[u] == v ? heaviest[u] : 0.0;
    };
    const double w = ordered_sum<kLong>(own, end, ordered_sum<kLong>(begin, own, 0.0, child) + heaviest[v], child);
    weak = w < threshold;
  }
  if (writes<kLong>()) new_parent[v] = weak ? int32_t(v) : parent[v];
}

__global__ void children_kernel(int32_t n, const int32_t* parent, int32_t* children) {
  const int64_t v = thread_index();
  if (v < n && parent[v] != v) atomicAdd(&children[parent[v]], 1);
}

__global__ void leaves_kernel(int32_t n, const int32_t* children, int32_t* ready, int32_t* count) {
  const int64_t v = thread_index();
  if (v < n && children[v] == 0) append(ready, count, int32_t(v));
}

// One round of cut_tall_trees: every ready vertex (its children all done, so its height final)
// is cut from its parent when kClusterMaxHeight edges hang below it, else raises the parent's
// height; a parent whose last child this was is ready next round. Threads' order does not matter.
__global__ void cut_round_kernel(const int32_t* ready, int32_t count, int32_t* parent, int32_t* children,
                                 int32_t* height, int32_t* next, int32_t* next_count) {
  const int64_t r = thread_index();
  if (r >= count) return;
  const int32_t v = ready[r], p = parent[v];
  if (p == v) return;
  if (height[v] >= kClusterMaxHeight)
    parent[v] = v;
  else
    atomicMax(&height[p], height[v] + 1);
  if (atomicSub(&children[p], 1) == 1) append(next, next_count, p);
}

// Every vertex is at most kClusterMaxHeight edges below its root; each root gets its cluster's
// first (smallest) vertex.
__global__ void roots_kernel(int32_t n, const int32_t* parent, int32_t* root, int32_t* first) {
  const int64_t v = thread_index();
  if (v >= n) return;
  int32_t r = int32_t(v);
  while (parent[r] != r) r = parent[r];
  root[v] = r;
  atomicMin(&first[r], int32_t(v));
}

__global__ void first_flags_kernel(int32_t n, const int32_t* root, const int32_t* first, int32_t* flag) {
  const int64_t v = thread_index();
  if (v < n) flag[v] = first[root[v]] == v ? 1 : 0;
}

// Clusters numbered in the order of their first vertex (number: the flags' exclusive scan).
__global__ void number_roots_kernel(int32_t n, const int32_t* root, const int32_t* number, int32_t* first) {
  const int64_t v = thread_index();
  if (v < n && root[v] == v) first[v] = number[first[v]];
}

__global__ void cluster_of_kernel(int32_t n, const int32_t* root, const int32_t* first, int32_t* cluster_of) {
  const int64_t v = thread_index();
  if (v < n) cluster_of[v] = first[root[v]];
}

__global__ void fill_kernel(int64_t n, int32_t* out, int32_t value) {
  const int64_t i = thread_index();
  if (i < n) out[i] = value;
}

// cluster_vertices(level 0) into cluster_of (n entries); returns the number of clusters. rounds:
// those of cut_tall_trees.
int32_t cluster(const DeviceCsrView& g, DeviceBuffer<int32_t>& cluster_of, int& rounds) {
  const int32_t n = g.rows;
  const LongItems longs = long_items(n, g.ptr);
  DeviceBuffer<int32_t> chosen(n, kStream), parent(n, kStream);
  DeviceBuffer<double> heaviest(n, kStream), volume(n, kStream);
  launch_rows(heaviest_kernel<false>, heaviest_kernel<true>, n, longs, g, chosen.data(), heaviest.data(),
              volume.data());
  launch(mutual_kernel, n, n, chosen.data(), parent.data());
  launch_rows(weak_kernel<false>, weak_kernel<true>, n, longs, g, parent.data(), heaviest.data(), volume.data(),
              chosen.data());
  std::swap(parent, chosen);

  // cut_tall_trees, leaves first, a round per level of the forest.
  DeviceBuffer<int32_t> children(n, kStream), height(n, kStream), ready(n, kStream), next(n, kStream), counts(2, kStream);
  PGSIM_CUDA(cudaMemsetAsync(children.data(), 0, n * sizeof(int32_t), kStream));
  PGSIM_CUDA(cudaMemsetAsync(height.data(), 0, n * sizeof(int32_t), kStream));
  PGSIM_CUDA(cudaMemsetAsync(counts.data(), 0, 2 * sizeof(int32_t), kStream));
  launch(children_kernel, n, n, parent.data(), children.data());
  launch(leaves_kernel, n, n, children.data(), ready.data(), counts.data());
  int64_t done = 0;
  int32_t count = read_back(counts.data());
  for (rounds = 0; count > 0; ++rounds) {
    int32_t* next_count = counts.data() + 1 - rounds % 2;
    PGSIM_CUDA(cudaMemsetAsync(next_count, 0, sizeof(int32_t), kStream));
    launch(cut_round_kernel, count, ready.data(), count, parent.data(), children.data(), height.data(), next.data(),
           next_count);
    done += count;
    count = read_back(next_count);
    std::swap(ready, next);
  }
  if (done != n) throw std::logic_error("cmg clustering: the heaviest-neighbour graph has a cycle");

  // The heights and the children's counts are read no more: their arrays become each vertex's
  // root and each root's first vertex (then its cluster's number).
  DeviceBuffer<int32_t>& root = height;
  DeviceBuffer<int32_t>& first = children;
  DeviceBuffer<int32_t> flags(size_t(n) + 1, kStream), number(size_t(n) + 1, kStream);  // the last: the scan's total
  launch(fill_kernel, n, int64_t(n), first.data(), n);
  launch(roots_kernel, n, n, parent.data(), root.data(), first.data());
  launch(first_flags_kernel, n, n, root.data(), first.data(), flags.data());
  PGSIM_CUDA(cudaMemsetAsync(flags.data() + n, 0, sizeof(int32_t), kStream));
  exclusive_sum(flags.data(), number.data(), int64_t(n) + 1, kStream);
  launch(number_roots_kernel, n, n, root.data(), number.data(), first.data());
  cluster_of = DeviceBuffer<int32_t>(n);
  launch(cluster_of_kernel, n, n, root.data(), first.data(), cluster_of.data());
  return read_back(number.data() + n);
}

// ---- the Galerkin product (galerkin_coarse) --------------------------------------------------

// Entries of member p's row (p-th in the members' order) that leave its cluster.
template <bool kLong>
__global__ void gather_count_kernel(const int32_t* long_items, DeviceCsrView g, const int32_t* members,
                                    const int32_t* member_cluster, const int32_t* cluster_of, int32_t* count) {
  const int64_t p = item_index<kLong>(long_items);
  if (!kLong && (p >= g.rows || is_long(g.ptr, members[p]))) return;
  const int32_t m = members[p], c = member_cluster[p];
  const int32_t entries = count_if<kLong>(g.ptr[m], g.ptr[m + 1], [&](int32_t k) { return cluster_of[g.col[k]] != c; });
  if (writes<kLong>()) count[p] = entries;
}

// Those entries, keyed (cluster, neighbour's cluster), in the host's gathering order.
template <bool kLong>
__global__ void gather_kernel(const int32_t* long_items, DeviceCsrView g, const int32_t* members,
                              const int32_t* member_cluster, const int32_t* cluster_of, const int32_t* at, int bits,
                              uint64_t* key, double* val) {
  const int64_t p = item_index<kLong>(long_items);
  if (!kLong && (p >= g.rows || is_long(g.ptr, members[p]))) return;
  const int32_t m = members[p], c = member_cluster[p];
  ordered_writes<kLong>(
      g.ptr[m], g.ptr[m + 1], at[p], [&](int32_t k) { return cluster_of[g.col[k]] != c; },
      [&](int32_t k, int32_t out) {
        key[out] = (uint64_t(c) << bits) | uint64_t(cluster_of[g.col[k]]);
        val[out] = g.val[k];
      });
}

__global__ void heads_kernel(int64_t entries, const uint64_t* key, int32_t* head) {
  const int64_t k = thread_index();
  if (k < entries) head[k] = k == 0 || key[k] != key[k - 1] ? 1 : 0;
}

// Each run of equal keys summed left to right by one thread (the host's merge), as unique q.
__global__ void sum_runs_kernel(int64_t entries, const uint64_t* key, const double* val, const int32_t* unique_at,
                                int bits, int32_t* row, int32_t* col, double* sum, int32_t* row_length) {
  const int64_t k = thread_index();
  if (k >= entries || (k > 0 && key[k] == key[k - 1])) return;
  double s = val[k];
  for (int64_t j = k + 1; j < entries && key[j] == key[k]; ++j) s += val[j];
  const int32_t q = unique_at[k];
  const int32_t c = int32_t(key[k] >> bits);
  row[q] = c;
  col[q] = int32_t(key[k] & ((uint64_t(1) << bits) - 1));
  sum[q] = s;
  atomicAdd(&row_length[c], 1);
}

// Unique q of row c goes to q + c (the diagonals of rows before c), one further past the diagonal.
__global__ void place_upper_kernel(int32_t uniques, const int32_t* row, const int32_t* col, const double* sum,
                                   int32_t* out_col, double* out_val) {
  const int64_t q = thread_index();
  if (q >= uniques) return;
  const int32_t c = row[q], d = col[q];
  const int64_t out = q + c + (d > c ? 1 : 0);
  out_col[out] = d;
  if (d > c) out_val[out] = sum[q];
}


// Row c's diagonal column, after its uniques of smaller columns (uniques [ptr[c] - c, ptr[c + 1] - c - 1)).
__global__ void place_diagonal_kernel(int32_t rows, const int32_t* ptr, const int32_t* unique_col, int32_t* out_col) {
  const int64_t c = thread_index();
  if (c >= rows) return;
  const int32_t begin = ptr[c] - int32_t(c), end = ptr[c + 1] - int32_t(c) - 1;
  out_col[ptr[c] + (lower_bound(unique_col, begin, end, int32_t(c)) - begin)] = int32_t(c);
}

// A lower entry (c, d), d < c, is row d's upper entry (d, c): the level exactly symmetric.
__global__ void place_lower_kernel(int32_t uniques, const int32_t* row, const int32_t* col, const int32_t* ptr,
                                   const int32_t* out_col, double* out_val) {
  const int64_t q = thread_index();
  if (q >= uniques) return;
  const int32_t c = row[q], d = col[q];
  if (d > c) return;
  out_val[q + c] = out_val[lower_bound(out_col, ptr[d], ptr[d + 1], c)];
}

// The diagonal: the negated sum of the row's off-diagonals, in column order (make_zero_row_sum).
template <bool kLong>
__global__ void zero_row_sum_kernel(const int32_t* long_items, int32_t rows, const int32_t* ptr, const int32_t* col,
                                    double* val) {
  const int64_t c = item_index<kLong>(long_items);
  if (!kLong && (c >= rows || is_long(ptr, int32_t(c)))) return;
  // The diagonal's value is unwritten: not read.
  const double off = ordered_sum<kLong>(ptr[c], ptr[c + 1], 0.0, [&](int32_t k) { return col[k] == c ? 0.0 : val[k]; });
  if (writes<kLong>()) val[lower_bound(col, ptr[c], ptr[c + 1], int32_t(c))] = -off;
}

// Through pinned buffers, the host's fresh pages faulted in on all cores (HostStaging::download).
template <class T>
void download(HostStaging& staging, const DeviceBuffer<T>& from, FillVector<T>& to) {
  to.resize(from.size());
  staging.download(to.data(), from.data(), from.size() * sizeof(T));
}

// galerkin_coarse(level 0, cluster_of, clusters), left on the device.
DeviceCsr coarse_level(const DeviceCsrView& g, const DeviceBuffer<int32_t>& cluster_of, int32_t clusters) {
  const int32_t n = g.rows;
  const int bits = bits_for(clusters);
  // Each cluster's members, ascending (a stable sort of the vertices by cluster).
  DeviceBuffer<int32_t> vertices(n, kStream), members(n, kStream), member_cluster(n, kStream);
  launch(iota_kernel, n, n, vertices.data());
  stable_sort_pairs(cluster_of.data(), member_cluster.data(), vertices.data(), members.data(), n, bits, kStream);
  DeviceBuffer<int32_t> count(size_t(n) + 1, kStream), at(size_t(n) + 1, kStream);
  PGSIM_CUDA(cudaMemsetAsync(count.data() + n, 0, sizeof(int32_t), kStream));
  const LongItems long_members = long_items(n, g.ptr, members.data());
  launch_rows(gather_count_kernel<false>, gather_count_kernel<true>, n, long_members, g, members.data(),
              member_cluster.data(), cluster_of.data(), count.data());
  exclusive_sum(count.data(), at.data(), int64_t(n) + 1, kStream);
  const int64_t entries = read_back(at.data() + n);

  DeviceBuffer<uint64_t> key(entries, kStream), sorted_key(entries, kStream);
  DeviceBuffer<double> val(entries, kStream), sorted_val(entries, kStream);
  launch_rows(gather_kernel<false>, gather_kernel<true>, n, long_members, g, members.data(), member_cluster.data(),
              cluster_of.data(), at.data(), bits, key.data(), val.data());
  stable_sort_pairs(key.data(), sorted_key.data(), val.data(), sorted_val.data(), entries, 2 * bits, kStream);
  DeviceBuffer<int32_t> head(size_t(entries) + 1, kStream), unique_at(size_t(entries) + 1, kStream);
  PGSIM_CUDA(cudaMemsetAsync(head.data() + entries, 0, sizeof(int32_t), kStream));
  launch(heads_kernel, entries, entries, sorted_key.data(), head.data());
  exclusive_sum(head.data(), unique_at.data(), entries + 1, kStream);
  const int32_t uniques = read_back(unique_at.data() + entries);

  DeviceBuffer<int32_t> unique_row(uniques, kStream), unique_col(uniques, kStream),
      length(size_t(clusters) + 1, kStream);
  DeviceBuffer<int32_t> ptr(size_t(clusters) + 1);
  DeviceBuffer<double> unique_sum(uniques, kStream);
  launch(fill_kernel, clusters, int64_t(clusters), length.data(), 1);  // the diagonal
  PGSIM_CUDA(cudaMemsetAsync(length.data() + clusters, 0, sizeof(int32_t), kStream));
  launch(sum_runs_kernel, entries, entries, sorted_key.data(), sorted_val.data(), unique_at.data(), bits,
         unique_row.data(), unique_col.data(), unique_sum.data(), length.data());
  exclusive_sum(length.data(), ptr.data(), int64_t(clusters) + 1, kStream);
  DeviceCsr A;
  A.rows = clusters;
  A.nnz = int64_t(uniques) + clusters;
  A.ptr = std::move(ptr);
  A.col = DeviceBuffer<int32_t>(A.nnz);
  A.val = DeviceBuffer<double>(A.nnz);
  launch(place_upper_kernel, uniques, uniques, unique_row.data(), unique_col.data(), unique_sum.data(), A.col.data(),
         A.val.data());
  launch(place_diagonal_kernel, clusters, clusters, A.ptr.data(), unique_col.data(), A.col.data());
  launch(place_lower_kernel, uniques, uniques, unique_row.data(), unique_col.data(), A.ptr.data(), A.col.data(),
         A.val.data());
  launch_rows(zero_row_sum_kernel<false>, zero_row_sum_kernel<true>, clusters, long_items(clusters, A.ptr.data()),
              clusters, A.ptr.data(), A.col.data(), A.val.data());
  return A;
}

}  // namespace

DeviceCsr grounded_laplacian_on_device(const DeviceCsrView& G) {
  const int32_t n = G.rows, rows = n + 1;  // the ground vertex is the last
  DeviceBuffer<double> excess(n, kStream);
  DeviceBuffer<int32_t> count(size_t(rows) + 1, kStream), grounded(size_t(n) + 1, kStream),
      ground_at(size_t(n) + 1, kStream);
  PGSIM_CUDA(cudaMemsetAsync(grounded.data() + n, 0, sizeof(int32_t), kStream));
  PGSIM_CUDA(cudaMemsetAsync(count.data() + rows, 0, sizeof(int32_t), kStream));
  const LongItems long_rows = long_items(n, G.ptr);
  launch_rows(excess_kernel<false>, excess_kernel<true>, n, long_rows, G, excess.data(), count.data(), grounded.data());
  exclusive_sum(grounded.data(), ground_at.data(), int64_t(n) + 1, kStream);
  ground_count_kernel<<<1, 1, 0, kStream>>>(n, ground_at.data(), count.data());
  PGSIM_CUDA_LAUNCH();
  DeviceCsr L;
  L.rows = rows;
  L.ptr = DeviceBuffer<int32_t>(size_t(rows) + 1);
  exclusive_sum(count.data(), L.ptr.data(), int64_t(rows) + 1, kStream);
  L.nnz = read_back(L.ptr.data() + rows);
  L.col = DeviceBuffer<int32_t>(size_t(L.nnz));
  L.val = DeviceBuffer<double>(size_t(L.nnz));
  launch_rows(level0_kernel<false>, level0_kernel<true>, n, long_rows, G, excess.data(), ground_at.data(),
              L.ptr.data(), L.col.data(), L.val.data());
  return L;
}

DeviceCoarsening coarsen_on_device(const DeviceCsrView& level, DeviceCoarsenTimes* times) {
  Stopwatch step;
  DeviceCoarsening c;
  int rounds = 0;
  c.clusters = cluster(level, c.cluster_of, rounds);
  const double clustering = step.lap();
  c.coarse = coarse_level(level, c.cluster_of, c.clusters);
  PGSIM_CUDA(cudaDeviceSynchronize());
  if (times) {
    times->clustering += clustering;
    times->galerkin += step.lap();
    times->rounds += rounds;
  }
  return c;
}

LevelCoarsening coarsen_level0_on_device(const DeviceCsrView& G, DeviceCoarsenTimes* times) {
  const StreamPoolKept pool;  // the scratch of one step kept for the next (device_buffer.hpp)
  DeviceCoarsenTimes t;
  Stopwatch step;
  const DeviceCsr level0 = grounded_laplacian_on_device(G);
  PGSIM_CUDA(cudaDeviceSynchronize());
  t.laplacian = step.lap();
  const DeviceCoarsening coarsened = coarsen_on_device(level0.view(), &t);
  step.lap();
  LevelCoarsening c;
  HostStaging staging;
  c.clustering.count = coarsened.clusters;
  download(staging, coarsened.cluster_of, c.clustering.cluster_of);
  c.coarse.rows = coarsened.clusters;
  download(staging, coarsened.coarse.ptr, c.coarse.ptr);
  download(staging, coarsened.coarse.col, c.coarse.col);
  download(staging, coarsened.coarse.val, c.coarse.val);
  t.copy = step.lap();
  if (times) *times = t;
  return c;
}

void load_coarsen_kernels() {
  // Only loads (no work on the device: the warm-up runs beside the GPU reader, whose copies and
  // kernels the coarsening of a small matrix here delayed by 0.08 s on the 7.2M-node grid). CUB's
  // kernels load on their first use.
  load_kernels(excess_kernel<false>, excess_kernel<true>, ground_count_kernel, level0_kernel<false>,
               level0_kernel<true>, heaviest_kernel<false>, heaviest_kernel<true>, mutual_kernel, weak_kernel<false>,
               weak_kernel<true>, children_kernel, leaves_kernel, cut_round_kernel, roots_kernel, first_flags_kernel,
               number_roots_kernel, cluster_of_kernel, fill_kernel, iota_kernel, long_items_kernel,
               gather_count_kernel<false>, gather_count_kernel<true>, gather_kernel<false>, gather_kernel<true>,
               heads_kernel, sum_runs_kernel, place_upper_kernel, place_diagonal_kernel, place_lower_kernel,
               zero_row_sum_kernel<false>, zero_row_sum_kernel<true>);
}

}  // namespace pgsim::gpu
