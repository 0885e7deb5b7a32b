// The CMG hierarchy built on the device (cmg_build.hpp): the builder's steps (cmg/builder.cpp) on
// the default stream, the levels coarsened by cmg_coarsen.cu's kernels, renumbered and permuted
// by this file's.
#include "gpu/cmg_build.hpp"

#include <cub/device/device_segmented_sort.cuh>
#include <cuda_runtime.h>

#include <cstdio>
#include <stdexcept>
#include <utility>

#include "cmg/coarse_factor.hpp"
#include "gpu/cmg_coarsen.hpp"
#include "gpu/device_algorithms.cuh"
#include "gpu/device_buffer.hpp"
#include "gpu/launch.cuh"
#include "gpu/row_kernels.cuh"
#include "mna/stopwatch.hpp"

namespace pgsim::gpu {
namespace {

// ---- the renumbering: a stable sort of a level's vertices by their cluster's new number -------

// key[v]: the new number of v's cluster; count[key[v]] counts the cluster's vertices.
__global__ void cluster_key_kernel(int32_t n, const int32_t* cluster_of, const int32_t* new_of_cluster, int32_t* key,
                                   int32_t* count) {
  const int64_t v = thread_index();
  if (v >= n) return;
  const int32_t k = new_of_cluster[cluster_of[v]];
  key[v] = k;
  atomicAdd(&count[k], 1);
}

__global__ void invert_kernel(int32_t n, const int32_t* old_of_new, int32_t* new_of_old) {
  const int64_t i = thread_index();
  if (i < n) new_of_old[old_of_new[i]] = int32_t(i);
}

// A level's numbering both ways.
struct Numbering {
  DeviceBuffer<int32_t> old_of_new, new_of_old;
};

Numbering identity(int32_t n) {
  Numbering p{DeviceBuffer<int32_t>(n, kStream), DeviceBuffer<int32_t>(n, kStream)};
  launch(iota_kernel, n, n, p.old_of_new.data());
  launch(iota_kernel, n, n, p.new_of_old.data());
  return p;
}

// The numbering of a level whose clusters (cluster_of, numbered in the order of their first
// vertex) become the next level's vertices new_of_cluster: each cluster a contiguous range,
// in the order of their new numbers, its vertices ascending (counting_sort's order); cluster_ptr
// gets the ranges.
Numbering renumber(const DeviceBuffer<int32_t>& cluster_of, int32_t clusters, const int32_t* new_of_cluster,
                   DeviceBuffer<int32_t>& cluster_ptr) {
  const int32_t n = int32_t(cluster_of.size());
  DeviceBuffer<int32_t> key(n, kStream), count(size_t(clusters) + 1, kStream), vertices(n, kStream),
      sorted_key(n, kStream);
  PGSIM_CUDA(cudaMemsetAsync(count.data(), 0, (size_t(clusters) + 1) * sizeof(int32_t), kStream));
  launch(cluster_key_kernel, n, n, cluster_of.data(), new_of_cluster, key.data(), count.data());
  cluster_ptr = DeviceBuffer<int32_t>(size_t(clusters) + 1);
  exclusive_sum(count.data(), cluster_ptr.data(), int64_t(clusters) + 1, kStream);
  launch(iota_kernel, n, n, vertices.data());
  Numbering p{DeviceBuffer<int32_t>(n, kStream), DeviceBuffer<int32_t>(n, kStream)};
  stable_sort_pairs(key.data(), sorted_key.data(), vertices.data(), p.old_of_new.data(), n, bits_for(clusters),
                    kStream);
  launch(invert_kernel, n, n, p.old_of_new.data(), p.new_of_old.data());
  return p;
}

// ---- the permutation: B[new(i)][new(j)] = A[i][j], columns sorted ------------------------------

// Row r's length: its source row's, one more where the diagonal is added.
__global__ void permuted_length_kernel(int32_t rows, const int32_t* ptr, const int32_t* old_of_new, int32_t added,
                                       int32_t* length) {
  const int64_t r = thread_index();
  if (r >= rows) return;
  const int32_t i = old_of_new[r];
  length[r] = ptr[i + 1] - ptr[i] + added;
}

// Row r of B from row old_of_new[r] of A, columns renumbered, unsorted: with add_diagonal (level
// 0, stored without them) the diagonal goes last, the negated sum of the row's entries in their
// order, else the row's own is taken. diagonal[r]: B's diagonal (left as it is where a row has
// none).
template <bool kLong>
__global__ void permute_kernel(const int32_t* long_items, DeviceCsrView A, const int32_t* old_of_new,
                               const int32_t* new_of_old, bool add_diagonal, const int32_t* out_ptr, int32_t* col,
                               double* val, double* diagonal) {
  const int64_t r = item_index<kLong>(long_items);
  if (!kLong && (r >= A.rows || is_long(A.ptr, old_of_new[r]))) return;
  const int32_t i = old_of_new[r], begin = A.ptr[i], end = A.ptr[i + 1];
  const int32_t shift = out_ptr[r] - begin;
  const int32_t first = kLong ? begin + int32_t(threadIdx.x) : begin, step = kLong ? int32_t(blockDim.x) : 1;
  for (int32_t k = first; k < end; k += step) {
    col[k + shift] = new_of_old[A.col[k]];
    val[k + shift] = A.val[k];
    if (!add_diagonal && A.col[k] == i) diagonal[r] = A.val[k];
  }
  if (!add_diagonal) return;
  const double d = ordered_sum<kLong>(begin, end, 0.0, [&](int32_t k) { return -A.val[k]; });
  if (!writes<kLong>()) return;
  col[end + shift] = int32_t(r);
  val[end + shift] = d;
  diagonal[r] = d;
}

// The Jacobi weights in place: 1 / (2 A_ii), 0 where A_ii is not positive.
__global__ void inverse_diagonal_kernel(int32_t n, double* d) {
  const int64_t i = thread_index();
  if (i < n) d[i] = d[i] > 0 ? 0.5 / d[i] : 0.0;
}

// Each row's entries sorted by column (distinct within a row).
void sort_rows(const DeviceBuffer<int32_t>& ptr, int32_t rows, const DeviceBuffer<int32_t>& col_in,
               const DeviceBuffer<double>& val_in, DeviceCsr& out) {
  const int64_t nnz = int64_t(col_in.size());
  out.col = DeviceBuffer<int32_t>(size_t(nnz));
  out.val = DeviceBuffer<double>(size_t(nnz));
  if (nnz == 0) return;
  size_t bytes = 0;
  PGSIM_CUDA(cub::DeviceSegmentedSort::SortPairs(nullptr, bytes, col_in.data(), out.col.data(), val_in.data(),
                                                 out.val.data(), nnz, rows, ptr.data(), ptr.data() + 1, kStream));
  DeviceBuffer<char> scratch(bytes, kStream);
  PGSIM_CUDA(cub::DeviceSegmentedSort::SortPairs(scratch.data(), bytes, col_in.data(), out.col.data(),
                                                 val_in.data(), out.val.data(), nnz, rows, ptr.data(), ptr.data() + 1,
                                                 kStream));
}

// The level A in numbering p, into `level` (its matrix and inverse diagonal).
void permute(const DeviceCsr& A, const Numbering& p, bool add_diagonal, DeviceCmgLevel& level) {
  const int32_t rows = A.rows;
  DeviceBuffer<int32_t> length(size_t(rows) + 1, kStream);
  PGSIM_CUDA(cudaMemsetAsync(length.data() + rows, 0, sizeof(int32_t), kStream));
  launch(permuted_length_kernel, rows, rows, A.ptr.data(), p.old_of_new.data(), add_diagonal ? 1 : 0, length.data());
  DeviceCsr& B = level.A;
  B.rows = rows;
  B.ptr = DeviceBuffer<int32_t>(size_t(rows) + 1);
  exclusive_sum(length.data(), B.ptr.data(), int64_t(rows) + 1, kStream);
  B.nnz = read_back(B.ptr.data() + rows);
  DeviceBuffer<int32_t> col(size_t(B.nnz), kStream);
  DeviceBuffer<double> val(size_t(B.nnz), kStream);
  level.inv_diag = DeviceBuffer<double>(size_t(rows));
  PGSIM_CUDA(cudaMemsetAsync(level.inv_diag.data(), 0, size_t(rows) * sizeof(double), kStream));
  launch_rows(permute_kernel<false>, permute_kernel<true>, rows, long_items(rows, A.ptr.data(), p.old_of_new.data()),
              A.view(), p.old_of_new.data(), p.new_of_old.data(), add_diagonal, B.ptr.data(), col.data(), val.data(),
              level.inv_diag.data());
  sort_rows(B.ptr, rows, col, val, B);
  launch(inverse_diagonal_kernel, rows, rows, level.inv_diag.data());
}

template <class T, class Allocator>
void download(const DeviceBuffer<T>& from, std::vector<T, Allocator>& to) {
  to.resize(from.size());
  from.download(to.data());
}

CsrMatrix download(const DeviceCsr& A) {
  CsrMatrix h;
  h.rows = A.rows;
  download(A.ptr, h.ptr);
  download(A.col, h.col);
  download(A.val, h.val);
  return h;
}

}  // namespace

std::string DeviceBuildTimes::text(size_t levels) const {
  char line[256];
  std::snprintf(line, sizeof line,
                "in %.4f s: laplacian %.4f s, clustering %.4f s (%d rounds), galerkin %.4f s, renumber %.4f s, permute "
                "%.4f s, coarse factor %.4f s (%zu levels)",
                total, laplacian, clustering, rounds, galerkin, renumber, permute, coarse_factor, levels);
  return line;
}

bool builds_on_device(const CmgOptions& options, int32_t rows) {
  return options.smoother == CmgSmoother::jacobi && int64_t(rows) + 1 > options.coarse_rows && options.max_levels > 1;
}

DeviceCmgHierarchy build_cmg_hierarchy_on_device(const DeviceCsrView& G, const CmgOptions& options,
                                                 DeviceBuildTimes* times) {
  if (!builds_on_device(options, G.rows))
    throw std::invalid_argument("build_cmg_hierarchy_on_device: the host builds this hierarchy (builds_on_device)");
  // The steps' scratch comes and goes in the default stream's order, from a pool that keeps it
  // for the next level, and is given back to the device once the hierarchy is made.
  const StreamPoolKept pool;
  DeviceBuildTimes t;
  Stopwatch step, total;
  // Levels first in the numbering the clustering gives (cluster ids by first vertex), as the host's.
  std::vector<DeviceCsr> raw;
  raw.push_back(grounded_laplacian_on_device(G));
  PGSIM_CUDA(cudaDeviceSynchronize());
  t.laplacian = step.lap();
  std::vector<DeviceCoarsening> clusterings;
  DeviceCoarsenTimes coarsening;
  int32_t rows = raw.back().rows;
  while (rows > options.coarse_rows && int(raw.size()) < options.max_levels) {
    DeviceCoarsening c = coarsen_on_device(raw.back().view(), &coarsening);
    if (coarsening_stalled(raw.size() - 1, rows, c.clusters, options)) break;
    rows = c.clusters;
    raw.push_back(std::move(c.coarse));
    clusterings.push_back(std::move(c));
  }
  t.clustering = coarsening.clustering;
  t.galerkin = coarsening.galerkin;
  t.rounds = coarsening.rounds;
  step.lap();

  // ... then renumbered from the coarsest level down, so every cluster is a contiguous range
  // ordered like the next level's vertices; each level permuted once its numbering is known.
  // Level 0 (stored without its diagonal) gets it as it is permuted; the coarsest keeps its
  // numbering (permuted by the identity: its rows sorted as they are, its diagonal taken).
  const size_t levels = raw.size();
  DeviceCmgHierarchy h;
  h.n = G.rows;
  h.levels.resize(levels);
  Numbering p = identity(raw.back().rows);
  t.renumber += step.lap();
  for (size_t l = levels; l-- > 0;) {
    if (l + 1 < levels) {
      const DeviceCoarsening& c = clusterings[l];
      p = renumber(c.cluster_of, c.clusters, p.new_of_old.data(), h.levels[l].cluster_ptr);
      clusterings[l] = DeviceCoarsening();  // read no more
      PGSIM_CUDA(cudaDeviceSynchronize());
      t.renumber += step.lap();
    }
    permute(raw[l], p, l == 0, h.levels[l]);
    raw[l] = DeviceCsr();
    PGSIM_CUDA(cudaDeviceSynchronize());
    t.permute += step.lap();
  }
  h.level0_ground = read_back(p.new_of_old.data() + G.rows);
  h.level0_of_unknown = DeviceBuffer<int32_t>(size_t(G.rows));
  PGSIM_CUDA(cudaMemcpy(h.level0_of_unknown.data(), p.new_of_old.data(), size_t(G.rows) * sizeof(int32_t),
                        cudaMemcpyDeviceToDevice));

  std::vector<LevelSize> sizes;
  for (const DeviceCmgLevel& level : h.levels) sizes.push_back({level.A.rows, level.A.nnz});
  std::vector<LevelCycle> cycles = cycle_of_levels(sizes, options);
  for (size_t l = 0; l < levels; ++l) {
    h.levels[l].repeats = cycles[l].repeats;
    h.levels[l].weights = std::move(cycles[l].weights);
  }
  h.coarse = factor_coarsest(download(h.levels.back().A));
  t.coarse_factor = step.lap();
  t.total = total.lap();
  if (times) *times = t;
  return h;
}

CmgHierarchy to_host(const DeviceCmgHierarchy& d) {
  CmgHierarchy h;
  h.smoother = CmgSmoother::jacobi;
  h.n = d.n;
  download(d.level0_of_unknown, h.level0_of_unknown);
  h.level0_ground = d.level0_ground;
  for (const DeviceCmgLevel& from : d.levels) {
    CmgLevel level;
    level.A = download(from.A);
    download(from.inv_diag, level.inv_diag);
    download(from.cluster_ptr, level.cluster_ptr);
    level.repeats = from.repeats;
    level.weights = from.weights;
    h.levels.push_back(std::move(level));
  }
  h.coarse = d.coarse;
  return h;
}

void load_build_kernels() {
  load_kernels(cluster_key_kernel, invert_kernel, permuted_length_kernel, permute_kernel<false>,
               permute_kernel<true>, inverse_diagonal_kernel, iota_kernel, long_items_kernel);
}

}  // namespace pgsim::gpu
