#include "dist/distributed_reduce.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>

#include "dist/node_subset.hpp"
#include "dist/record_exchange.hpp"
#include "dist/step_log.hpp"
#ifdef PGSIM_HAVE_NCCL
#include "gpu/device_stamp.hpp"
#endif
#include "mna/host_memory.hpp"
#include "mna/prefix_sum.hpp"
#include "mna/stopwatch.hpp"
#include "mna/touched_vector.hpp"

namespace pgsim::dist {
namespace {

// The rows split: entries in the rank's own columns (local indices) for the elimination, and per
// row the entries in other ranks' columns (global), which pin their row.
struct SplitRows {
  CsrMatrix local;
  CsrMatrix cut;  // same rows; global columns, ascending
  std::vector<uint8_t> pinned;
};

// Calls f(u, col, val, len, b) for every row, on all threads (static chunks of rows).
template <class F>
void each_row(const MovedRows& rows, F f) {
  constexpr int32_t kChunk = 4096;
  const int32_t n = rows.rows(), chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static)
  for (int32_t c = 0; c < chunks; ++c) rows.for_rows(c * kChunk, std::min(n, (c + 1) * kChunk), f);
}

// The rows split, and b in their order: the split reads every row where the migration left it (the
// rows that stayed on this rank were not copied), as it writes them anyway. Rows that no
// migration moved and that couple to no other rank are already the local half: their columns
// made local in place, not copied (the 50M grid at P = 2, 17.4M rows a rank on 16 threads: the
// split 0.12-0.14 s copied, 0.03 s in place).
SplitRows split(MovedRows rows, std::vector<double>& b) {
  const int32_t n = rows.rows(), first = int32_t(rows.first_row());
  const auto local = [&](int32_t j) { return j >= first && j - first < n; };
  SplitRows s;
  s.local.rows = s.cut.rows = n;
  if (rows.unmoved()) {
    DistributedRows own = std::move(rows).take_unmoved();
    if (!couples_elsewhere(own)) {
      int32_t* col = own.rows.col.data();
      const auto entries = std::ptrdiff_t(own.rows.col.size());
#pragma omp parallel for schedule(static)
      for (std::ptrdiff_t k = 0; k < entries; ++k) col[k] -= first;
      s.local = std::move(own.rows);
      b = std::move(own.b);
      s.cut.ptr.assign(size_t(n) + 1, 0);
      s.pinned.assign(size_t(n), 0);
      return s;
    }
    rows = MovedRows(std::move(own));
  }
  s.pinned.resize(size_t(n));
  // Row lengths of both halves, their offsets, then each row written at its place: all threads.
  size_for_overwrite(s.local.ptr, size_t(n) + 1);
  size_for_overwrite(s.cut.ptr, size_t(n) + 1);
  size_for_overwrite(b, size_t(n));
  s.local.ptr[0] = s.cut.ptr[0] = 0;
  each_row(rows, [&](int32_t u, const int32_t* col, const double*, int32_t len, double bu) {
    int32_t own = 0;
    for (int32_t k = 0; k < len; ++k) own += local(col[k]);
    s.local.ptr[size_t(u) + 1] = own;
    s.cut.ptr[size_t(u) + 1] = len - own;
    s.pinned[size_t(u)] = own < len;
    b[size_t(u)] = bu;
  });
  prefix_sum(s.local.ptr);
  prefix_sum(s.cut.ptr);
  size_for_overwrite(s.local.col, size_t(s.local.ptr[size_t(n)]));
  size_for_overwrite(s.local.val, s.local.col.size());
  size_for_overwrite(s.cut.col, size_t(s.cut.ptr[size_t(n)]));
  size_for_overwrite(s.cut.val, s.cut.col.size());
  each_row(rows, [&](int32_t u, const int32_t* col, const double* val, int32_t len, double) {
    int32_t l = s.local.ptr[size_t(u)], c = s.cut.ptr[size_t(u)];
    for (int32_t k = 0; k < len; ++k) {
      const int32_t j = col[k];
      if (local(j)) s.local.col[size_t(l)] = j - first, s.local.val[size_t(l++)] = val[k];
      else s.cut.col[size_t(c)] = j, s.cut.val[size_t(c++)] = val[k];
    }
  });
  return s;
}

// Steps 4 and 5 on `rows`, rank q holding rows [row_begin[q], row_begin[q + 1]).
// times (-v): the split, the elimination, the block.
void eliminate_and_split(RankSystem& sys, MovedRows rows, const std::vector<int64_t>& row_begin, int ranks,
                         MPI_Comm comm, double times[3]) {
  Stopwatch watch;
  const int32_t n = rows.rows();
  std::vector<double> b;
  SplitRows s = split(std::move(rows), b);
  times[0] = watch.lap();

  sys.elimination = eliminate_chains(std::move(s.local), b, &s.pinned);  // in s.local's arrays, not a copy
  times[1] = watch.lap();
  std::vector<double>().swap(b);
  EliminatedSystem& e = sys.elimination;

  // The kept rows' global numbering: rank after rank, in their order.
  RankBlock& blk = sys.block;
  int32_t kept = e.G.rows, first_row = 0;
  int64_t total = kept;
  MPI_Exscan(&kept, &first_row, 1, MPI_INT32_T, MPI_SUM, comm);
  MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_INT64_T, MPI_SUM, comm);
  blk.first_row = blk.rank == 0 ? 0 : first_row;
  blk.global_rows = total;
  std::vector<int32_t> kept_index;  // local unknown -> local kept row
  assign_touched(kept_index, size_t(n), -1);
#pragma omp parallel for schedule(static, 65536)
  for (std::ptrdiff_t k = 0; k < std::ptrdiff_t(e.kept.size()); ++k) kept_index[size_t(e.kept[size_t(k)])] = int32_t(k);

  // The halo in ascending unknown (= ascending new global) order, grouped by owner, and what each
  // neighbour needs of this rank: its rows coupled to the neighbour's (G is symmetric).
  std::vector<int32_t> halo(s.cut.col.begin(), s.cut.col.end());
  std::sort(halo.begin(), halo.end());
  halo.erase(std::unique(halo.begin(), halo.end()), halo.end());
  std::vector<int32_t> neighbor_of(size_t(ranks), -1);
  for (int32_t h = 0; h < int32_t(halo.size()); ++h) {
    const int q = owner_of_row(row_begin, halo[size_t(h)]);
    if (neighbor_of[size_t(q)] < 0) {
      neighbor_of[size_t(q)] = int32_t(blk.neighbors.size());
      blk.neighbors.push_back({q, h, 0, {}});
    }
    ++blk.neighbors[size_t(neighbor_of[size_t(q)])].recv_count;
  }
  CsrMatrix& B = blk.boundary;
  for (int32_t u = 0; u < n; ++u) {
    if (!s.pinned[size_t(u)]) continue;  // pinned rows are kept
    const int32_t l = kept_index[size_t(u)];
    blk.boundary_rows.push_back(l);
    for (int32_t k = s.cut.ptr[size_t(u)]; k < s.cut.ptr[size_t(u) + 1]; ++k) {
      const int32_t j = s.cut.col[size_t(k)];
      B.col.push_back(int32_t(std::lower_bound(halo.begin(), halo.end(), j) - halo.begin()));
      B.val.push_back(s.cut.val[size_t(k)]);
      std::vector<int32_t>& send = blk.neighbors[size_t(neighbor_of[size_t(owner_of_row(row_begin, j))])].send;
      if (send.empty() || send.back() != l) send.push_back(l);
    }
    B.ptr.push_back(int32_t(B.col.size()));
  }
  B.rows = int32_t(blk.boundary_rows.size());
  s = SplitRows{};

  // The halo's new numbers, from their owners: each neighbour sends its send list's, ascending,
  // which are the rows of it this rank's halo holds, in the same order.
  std::vector<int> counts(size_t(ranks), 0);
  std::vector<int32_t> numbers;
  for (const Neighbor& nb : blk.neighbors) {
    counts[size_t(nb.rank)] = int(nb.send.size());
    for (int32_t l : nb.send) numbers.push_back(blk.first_row + l);
  }
  std::vector<int> recv_counts;
  blk.halo_global = all_to_all(numbers, counts, comm, recv_counts);
  for (const Neighbor& nb : blk.neighbors)
    if (recv_counts[size_t(nb.rank)] != nb.recv_count) throw std::logic_error("reduce: G is not symmetric across ranks");
  if (blk.halo_global.size() != halo.size()) throw std::logic_error("reduce: G is not symmetric across ranks");

  blk.interior = std::move(e.G);
  blk.b = std::move(e.b);
  e.G = CsrMatrix{};
  e.b = {};
  times[2] = watch.lap();
}

}  // namespace

ScannedOnDevice scan_on_device(const RankNetlist& nl, int device) {
  ScannedOnDevice up;
  if (device < 0) {
    if (nl.device_elements) throw std::logic_error("scan_on_device: the elements are on a device, the reduction on the host");
    return up;
  }
#ifdef PGSIM_HAVE_NCCL
  if (nl.device_elements) {
    up.elements = std::dynamic_pointer_cast<gpu::DeviceElements>(nl.device_elements);
    if (!up.elements || up.elements->device() != device)
      throw std::logic_error("scan_on_device: the elements are on another device than the reduction's");
  } else {
    up.elements = std::make_shared<gpu::DeviceElements>(device, nl.elements);
  }
  up.scan = up.elements->scan(nl.first_node, nl.owned(), nl.total_nodes);
#else
  throw std::logic_error("scan_on_device: this build has no GPU stamp (it needs CUDA, MPI and NCCL)");
#endif
  return up;
}

RankSystem reduce_distributed(const RankNetlist& nl, MPI_Comm comm, bool repartition, const std::function<void()>& merged,
                              const std::function<void()>& stamped, int device) {
  RankSystem sys;
  sys.first_node = nl.first_node;
  sys.owned_nodes = nl.owned();
  sys.block.rank = nl.rank;
  Stopwatch step;  // -v: the steps' times (dist/step_log.hpp)
  double peak[4];  // -v: the peak host bytes after each step (VmHWM)
  const bool were_there = nl.device_elements != nullptr;
  ScannedOnDevice up = scan_on_device(nl, device);
  const std::string scanned =
      up.elements ? fmt::format("elements {} its GPU and scanned there {:.3f} s (the pass {:.3f} s, its results down {:.3f} s), ",
                                were_there ? "already on" : "up to", step.lap(), up.scan.seconds[0], up.scan.seconds[1])
                  : "";
  sys.super_nodes = SuperNodes(nl, comm, up.elements ? &up.scan : nullptr);
  if (merged) merged();
  const double merge_seconds = step.lap();
  peak[0] = double(host_memory().peak);
  OwnedRows owned = stamp_owned_rows(nl, sys.super_nodes, comm, up.elements.get());
  if (stamped) stamped();
  const double stamp_seconds = step.lap();
  peak[1] = double(host_memory().peak);
  sys.unknown_begin = owned.unknown_begin;
  DistributedRows rows{owned.first_unknown, owned.unknown_begin.back(), std::move(owned.G), std::move(owned.b)};
  owned = OwnedRows{};
  double local[2] = {double(rows.rows.nnz()), 0.0}, global[2];
  for (double v : rows.b) local[1] += v * v;
  MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_SUM, comm);
  sys.reduced_nnz = static_cast<int64_t>(global[0]);
  sys.b_norm = std::sqrt(global[1]);
  std::vector<int64_t> row_begin(sys.unknown_begin.begin(), sys.unknown_begin.end());
  // A system of fewer rows than ranks is no work to share: it stays where the parse put it.
  double planned = 0;
  int64_t leaving = 0;  // -v: the rows that step 3 sends to other ranks
  MovedRows moved_rows;
  std::optional<RowMigration> plan;
  if (repartition && nl.ranks > 1 && rows.global_rows >= nl.ranks) {
    plan = plan_migration(rows, comm);
    planned = step.lap();
    if (plan->keeps_every_row()) plan.reset();  // the parse's split kept: nothing to move, or to return after the solve
  }
  if (plan) {
    leaving = plan->rows_leaving(nl.rank);
    moved_rows = migrate(std::move(rows), *plan, comm);
    row_begin = plan->new_offset;
    sys.migration = std::move(plan);
  } else {
    moved_rows = MovedRows(std::move(rows));
  }
  const double moved = step.lap();
  peak[2] = double(host_memory().peak);
  double parts[3];
  eliminate_and_split(sys, std::move(moved_rows), row_begin, nl.ranks, comm, parts);
  peak[3] = double(host_memory().peak);
  log_step(comm, fmt::format("distributed reduction on rank {}: {}super-nodes {:.3f} s ({:.0f} MB held, {} links across ranks), "
                             "stamp and floating check {:.3f} s, repartition {:.3f} s (plan {:.3f} s, rows moved {:.3f} s: {} "
                             "of its {} to other ranks), chain elimination and block {:.3f} s (split {:.3f} s, elimination {:.3f} "
                             "s, block {:.3f} s); peak host memory after each step {:.0f}, {:.0f}, {:.0f}, {:.0f} MB",
                             nl.rank, scanned, merge_seconds, double(sys.super_nodes.bytes()) / 1e6, sys.super_nodes.links(), stamp_seconds,
                             planned + moved, planned, moved, leaving, sys.unknowns(), step.lap(), parts[0], parts[1], parts[2],
                             peak[0] / 1e6, peak[1] / 1e6, peak[2] / 1e6, peak[3] / 1e6));
  return sys;
}

std::vector<double> owned_voltages(const RankSystem& sys, const std::vector<double>& x_block, MPI_Comm comm) {
  const SuperNodes& sn = sys.super_nodes;
  const int32_t first = sys.first_unknown(), n = sys.unknowns();
  Stopwatch watch;  // -v: the steps' times (dist/step_log.hpp)
  std::vector<double> x;
  sys.elimination.recover(x_block, x);
  const double recovered = watch.lap();
  if (sys.migration) x = return_values(x, *sys.migration, comm);  // over this rank's unknowns again
  const double returned = watch.lap();

  // Every owned node's unknown (looked up in parallel), and the unknowns of other ranks that some
  // take their voltage from, ascending (so grouped by owner): asked of their owners in one
  // all-to-all, answered in another. Those unknowns are marked in a bitmap over all unknowns on
  // all threads, which lists them ascending, once each, and places each answer by its rank
  // (where a net spans ranks, millions of nodes: at 50M nodes on 4 ranks a sort of them and a
  // binary search each took 0.65-0.77 s, against 0.07-0.09 s where each net lies on one rank).
  const auto nodes = std::ptrdiff_t(sys.owned_nodes);
  std::vector<int32_t> unknown;  // arrays of a node each: pages faulted in by all threads (touched_vector.hpp)
  size_for_overwrite(unknown, sys.owned_nodes);
#pragma omp parallel for schedule(static, 4096)
  for (std::ptrdiff_t i = 0; i < nodes; ++i) unknown[size_t(i)] = sn.unknown_of(sys.first_node + uint32_t(i));
  const auto elsewhere = [&](int32_t u) { return u >= 0 && (u < first || u - first >= n); };
  NodeSubset remote_set(0, uint32_t(sys.unknown_begin.back()));
#pragma omp parallel for schedule(static, 65536)
  for (std::ptrdiff_t i = 0; i < nodes; ++i)
    if (elsewhere(unknown[size_t(i)])) remote_set.mark(uint32_t(unknown[size_t(i)]));
  remote_set.rank();
  const std::vector<uint32_t> remote = remote_set.members();
  std::vector<int> counts(sys.unknown_begin.size() - 1, 0);
  for (uint32_t u : remote) ++counts[size_t(owner_of_row(sys.unknown_begin, u))];
  const std::vector<double> values = ask_owners(remote, counts, [&](uint32_t u) { return x[u - uint32_t(first)]; }, comm);

  std::vector<double> v;
  size_for_overwrite(v, sys.owned_nodes);
#pragma omp parallel for schedule(static, 4096)
  for (std::ptrdiff_t i = 0; i < nodes; ++i) {
    const int32_t u = unknown[size_t(i)];
    double xu = 0.0;
    if (elsewhere(u)) xu = values[remote_set.count_below(uint32_t(u))];
    else if (u >= 0) xu = x[size_t(u - first)];
    v[size_t(i)] = sn.offset_of(sys.first_node + uint32_t(i)) + xu;
  }
  log_step(comm, fmt::format("voltages on rank {}: eliminated unknowns recovered {:.3f} s, values returned to their rows' "
                             "first ranks {:.3f} s, node voltages {:.3f} s ({} values of other ranks)",
                             sys.block.rank, recovered, returned, watch.lap(), remote.size()));
  return v;
}

}  // namespace pgsim::dist
