#include "dist/owned_rows.hpp"

#include <omp.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <climits>
#include <numeric>
#include <stdexcept>
#include <string>

#include "dist/collective_error.hpp"
#include "dist/record_exchange.hpp"
#include "dist/row_contribution.hpp"
#include "dist/step_log.hpp"
#ifdef PGSIM_HAVE_NCCL
#include "gpu/device_stamp.hpp"
#endif
#include "mna/concurrent_union_find.hpp"
#include "mna/prefix_sum.hpp"
#include "mna/reduce.hpp"
#include "mna/row_slots.hpp"
#include "mna/stopwatch.hpp"
#include "mna/touched_vector.hpp"
#include "parser/input_error.hpp"

namespace pgsim::dist {
namespace {

// An element that stamps (DC: resistors and current sources), its ends' unknowns looked up once
// per pass over it.
struct Ends {
  int32_t up = -1, um = -1;
  double g = 0;  // its conductance; 0 for a current source
  bool current = false;
};

// Whether e stamps; if so, x becomes its ends.
bool stamped_ends(const Element& e, const SuperNodes& sn, Ends& x) {
  x.current = e.kind == ElementKind::CurrentSource;
  x.g = x.current ? 0.0 : element_conductance(e, nullptr);
  if (!x.current && !(x.g > 0)) return false;  // stamps(): no conductance
  x.up = sn.unknown_of(e.plus), x.um = sn.unknown_of(e.minus);
  return true;
}

// Calls row(u, coupling) for each unknown u whose row the element stamps, once per row (a current
// source within one unknown stamps its row twice); coupling: a conductance to another unknown.
template <class Row>
void rows_of(const Ends& x, Row row) {
  if (x.current) {
    if (x.up >= 0) row(x.up, false);
    if (x.um >= 0 && x.um != x.up) row(x.um, false);
    return;
  }
  if (x.up == x.um) return;  // across a super-node: no current flows
  if (x.up >= 0) row(x.up, x.um >= 0);
  if (x.um >= 0) row(x.um, x.up >= 0);
}

// The records row u (one of rows_of()'s) gets from element e, through emit(c): one, or two for a
// current source within one unknown. reduce()'s arithmetic: b -= t there is b += -t here, the
// same double. Where every offset of a node with an unknown is +0.0 (sn.offsets_zero()), a
// conductance between two unknowns has o_self - o_other = +0.0: the same delta, its offsets not
// looked up.
template <class Emit>
void contributions_to(const Element& e, const Ends& x, int32_t u, const SuperNodes& sn, Emit emit) {
  if (x.current) {
    // SPICE: a positive source drives current out of its plus node into minus; a row holding
    // both ends gets both terms, in this order.
    if (x.up == u) emit(Contribution{u, kCurrent, 0.0, -e.value});
    if (x.um == u) emit(Contribution{u, kCurrent, 0.0, e.value});
    return;
  }
  const bool plus = x.up == u;
  const int32_t other = plus ? x.um : x.up;
  if (other >= 0 && sn.offsets_zero()) {
    emit(Contribution{u, other, x.g, -(x.g * 0.0)});
    return;
  }
  const double o_self = sn.offset_of(plus ? e.plus : e.minus), o_other = sn.offset_of(plus ? e.minus : e.plus);
  if (other >= 0) emit(Contribution{u, other, x.g, -(x.g * (o_self - o_other))});
  else emit(Contribution{u, kFixed, x.g, x.g * (o_other - o_self)});
}

// The contributions to this rank's rows, by local row, each row's in element order: those
// received from lower ranks, this rank's own, then those received from higher ranks.
//
// This rank's own (nearly all of them) are held as the numbers of the elements that stamp each
// row, and their contributions computed again when the row is assembled, as reduce() does (a
// record is 24 bytes): those coupling the row to another unknown at the start of the row's slot
// of G.col (mna/row_slots.hpp), which the row is later written over, the others (current
// sources, conductances to fixed nodes: a few per row) in `extra`. Those received (elements of
// other ranks that stamp this rank's rows) are records, grouped by row through an index.
struct RowContributions {
  const RankNetlist* nl = nullptr;
  const SuperNodes* sn = nullptr;
  int32_t first_row = 0;
  FillVector<uint32_t> extra;  // row u's: extra[extra_ptr[u] .. extra_ptr[u + 1]), ascending
  FillVector<int32_t> extra_ptr;
  FillVector<Contribution> received;    // not zeroed first: the exchange writes it on all threads
  size_t lower = 0;                      // received from lower ranks: received[0 .. lower)
  FillVector<int32_t> received_ptr;      // empty when none was received
  FillVector<uint32_t> received_order;   // row u's: received[received_order[received_ptr[u] .. received_ptr[u + 1])], ascending

  // The number of a row's own couplings, whose element numbers begin its slot of G.col: held in
  // the slot's last place, the diagonal's, until assemble() writes the row (counting the row's
  // received couplings instead read its received records, at random, once more).
  static int32_t own_couplings(const int32_t* slot, int32_t slot_size) { return slot[slot_size - 1]; }

  // Row u's contributions, in element order, through emit(c). Its slot of G.col begins at `slot`
  // and holds `slot_size` entries: its own couplings' element numbers first, ascending
  // (exchange_contributions()).
  template <class Emit>
  void collect(size_t u, const int32_t* slot, int32_t slot_size, Emit emit) const {
    int32_t p = 0, end = 0;
    if (!received_ptr.empty()) p = received_ptr[u], end = received_ptr[u + 1];
    const int32_t own = own_couplings(slot, slot_size);
    for (; p < end && received_order[size_t(p)] < lower; ++p) emit(received[received_order[size_t(p)]]);
    const int32_t global = first_row + int32_t(u);
    const uint32_t* x = extra.data() + extra_ptr[u];
    const uint32_t* x_end = extra.data() + extra_ptr[u + 1];
    const int32_t* g = slot;
    const int32_t* g_end = slot + own;
    while (g < g_end || x < x_end) {  // both lists ascending, merged
      const uint32_t k = x == x_end || (g < g_end && uint32_t(*g) < *x) ? uint32_t(*g++) : *x++;
      const Element& e = nl->elements[k];
      Ends ends;
      stamped_ends(e, *sn, ends);
      contributions_to(e, ends, global, *sn, emit);
    }
    for (; p < end; ++p) emit(received[received_order[size_t(p)]]);
  }
};

// Sorts a row's entries by key, in place, stably: an insertion sort for the few of a grid's row,
// where std::stable_sort would allocate a buffer each time, on every thread at once; a long row
// by std::stable_sort.
template <class T, class Key>
void sort_by_key(T* first, T* last, Key key) {
  if (last - first > 32) {
    std::stable_sort(first, last, [&](const T& x, const T& y) { return key(x) < key(y); });
    return;
  }
  for (T* i = first + 1; i < last; ++i)
    for (T* j = i; j > first && key(*j) < key(j[-1]); --j) std::swap(*j, j[-1]);
}

// A counting sort's scatter, list[--*counter] = value for many rows' counters (many threads'
// elements stamp one row), queued and run in batches: each queued counter's cache line is
// prefetched, then the batch's atomic decrements run together, then its stores, their lines
// prefetched first. A locked instruction waits for every earlier store to reach the cache, and for
// its own line: one at a time, each waited for the random store before it and for its own miss
// (at 5M nodes, one thread a rank: the scatter of the own couplings 0.14 s of CPU, 0.09 s
// batched, 0.08 s with the stores' lines prefetched).
class BatchedScatter {
 public:
  // list[--*counter] = value, done by the next flush() at the latest.
  void place(int32_t* counter, uint32_t* list, uint32_t value) {
    __builtin_prefetch(counter, 1);
    counter_[pending_] = counter, list_[pending_] = list, value_[pending_] = value;
    if (++pending_ == kBatch) flush();
  }
  void flush() {
    int32_t at[kBatch];
    for (int i = 0; i < pending_; ++i) at[i] = __atomic_sub_fetch(counter_[i], 1, __ATOMIC_RELAXED);
    for (int i = 0; i < pending_; ++i) __builtin_prefetch(list_[i] + at[i], 1);  // the stores' lines fetched together
    for (int i = 0; i < pending_; ++i) list_[i][at[i]] = value_[i];
    pending_ = 0;
  }

 private:
  static constexpr int kBatch = 64;
  int32_t* counter_[kBatch];
  uint32_t* list_[kBatch];
  uint32_t value_[kBatch];
  int pending_ = 0;
};

// -v: the stamp's passes, timed on every rank (dist/step_log.hpp).
struct StampTimes {
  Stopwatch watch;
  double contributions = 0, exchange = 0, by_row = 0, assemble = 0, floating = 0;
  uint64_t sent = 0, kept = 0;  // contributions sent to other ranks; elements listed for this rank's rows
};

// Two passes over the rank's elements. The first counts each row's own couplings and other
// elements, and lists (per thread, in element order) the elements that stamp rows of other ranks,
// whose records are then made and exchanged. The slots are then sized: row u's is G.ptr[u + 1] =
// its couplings, own and received, plus one for the diagonal, which assemble() fills once (it is
// exact unless the row has parallel conductances); G.col and G.val are allocated, and the second
// pass writes the own couplings' element numbers into the slots (their count in the slot's last
// place). This rank's work before and after the exchange runs through `agreement`, which agrees
// before the exchange; after a failure here or on another rank the result is not to be used
// (the caller's next agreement throws).
RowContributions exchange_contributions(const RankNetlist& nl, const SuperNodes& sn, OwnedRows& out,
                                        MPI_Comm comm, StampTimes& times, FailureAgreement& agreement,
                                        int64_t max_entries) {
  const auto ranks = size_t(nl.ranks);
  const auto n = size_t(out.rows());
  const int32_t first_row = out.first_unknown;
  RowContributions rc;
  rc.nl = &nl, rc.sn = &sn, rc.first_row = first_row;
  const int threads = omp_get_max_threads();
  std::vector<size_t> count(size_t(threads) * ranks, 0);  // [thread][rank]: records, then where it writes
  std::vector<std::vector<uint32_t>> remote(static_cast<size_t>(threads));  // [thread]: its elements that stamp other ranks' rows
  const size_t elements = nl.elements.size();
  const auto local = [&](int32_t u) { return uint32_t(u - first_row) < uint32_t(n); };
  FillVector<int32_t> cursor;  // row u's own couplings, then where the second pass writes the next
  std::vector<int> send_counts;
  FillVector<Contribution> send;
  agreement.run([&] {
    if (elements > UINT32_MAX) throw InputError("a rank holds more than 2^32 elements, beyond this build's index width");
    assign_parallel(cursor, n, 0);
    assign_parallel(rc.extra_ptr, n + 1, 0);  // row u's count at [u], summed to row ends, filled downwards
    int64_t own = 0;
#pragma omp parallel num_threads(threads) reduction(+ : own)
    {
      const auto t = size_t(omp_get_thread_num());
      // Counted and listed in the thread's own memory, published after its loop: count's entries
      // and remote's headers of several threads share cache lines, which a write per record would
      // pass from core to core (mna/per_thread.hpp; at 50M nodes, P = 2, about half of this pass
      // on 16 threads).
      std::vector<size_t> mine(ranks, 0);
      std::vector<uint32_t> my_remote;
#pragma omp for schedule(static) nowait
      for (size_t k = 0; k < elements; ++k) {
        Ends x;
        if (!stamped_ends(nl.elements[k], sn, x)) continue;
        bool elsewhere = false;
        rows_of(x, [&](int32_t u, bool coupling) {
          if (!local(u)) {
            elsewhere = true;
            mine[size_t(owner_of_row(out.unknown_begin, u))] += x.current && x.up == x.um ? 2 : 1;
            return;
          }
          int32_t* counted = coupling ? &cursor[size_t(u - first_row)] : &rc.extra_ptr[size_t(u - first_row)];
          __atomic_fetch_add(counted, 1, __ATOMIC_RELAXED);
          ++own;
        });
        if (elsewhere) my_remote.push_back(uint32_t(k));
      }
      std::copy(mine.begin(), mine.end(), &count[t * ranks]);
      remote[t] = std::move(my_remote);
    }
    if (own > max_entries) throw InputError(kTooManyElementEnds);
    times.kept = uint64_t(own);
    send_counts = send_places(count, ranks);
    send.resize(size_t(std::accumulate(send_counts.begin(), send_counts.end(), int64_t(0))));
#pragma omp parallel num_threads(threads)
    {
      const auto t = size_t(omp_get_thread_num());
      std::vector<size_t> next(&count[t * ranks], &count[t * ranks] + ranks);  // the thread's own cursors, as above
      for (uint32_t k : remote[t]) {
        const Element& e = nl.elements[k];
        Ends x;
        stamped_ends(e, sn, x);
        rows_of(x, [&](int32_t u, bool) {
          if (local(u)) return;
          size_t& at = next[size_t(owner_of_row(out.unknown_begin, u))];
          contributions_to(e, x, u, sn, [&](const Contribution& c) { send[at++] = c; });
        });
      }
    }
    std::vector<std::vector<uint32_t>>().swap(remote);
    times.contributions = times.watch.lap();
    times.sent = send.size();
  });
  agreement.agree();  // before the exchange, which a rank that failed would not join
  std::vector<int> recv_counts;
  all_to_all(send, send_counts, comm, recv_counts, rc.received);
  agreement.run([&] {
    FillVector<Contribution>().swap(send);
    for (int q = 0; q < nl.rank; ++q) rc.lower += size_t(recv_counts[size_t(q)]);
    times.exchange = times.watch.lap();

    // The slots' sizes, G.ptr[u + 1]: the own couplings and the diagonal, then the received couplings.
    FillVector<int32_t>& slot = out.G.ptr;
    size_for_overwrite(slot, n + 1);
    slot[0] = 0;
#pragma omp parallel for schedule(static, 65536)
    for (std::ptrdiff_t u = 0; u < std::ptrdiff_t(n); ++u) slot[size_t(u) + 1] = cursor[size_t(u)] + 1;
    // The received, grouped by row: a counting sort with atomic increments (any order within a
    // row), then each row's few indices sorted back into the order received.
    const auto received = std::ptrdiff_t(rc.received.size());
    if (received > 0) {
      const auto row_of = [&](std::ptrdiff_t i) { return size_t(rc.received[size_t(i)].row - first_row); };
      assign_parallel(rc.received_ptr, n + 1, 0);
#pragma omp parallel for schedule(static, 65536)
      for (std::ptrdiff_t i = 0; i < received; ++i) {
        __atomic_fetch_add(&rc.received_ptr[row_of(i)], 1, __ATOMIC_RELAXED);
        if (rc.received[size_t(i)].neighbour >= 0) __atomic_fetch_add(&slot[row_of(i) + 1], 1, __ATOMIC_RELAXED);
      }
      prefix_sum(rc.received_ptr);
      rc.received_order.resize(size_t(received));
#pragma omp parallel for schedule(static, 65536)
      for (std::ptrdiff_t i = 0; i < received; ++i)
        rc.received_order[size_t(__atomic_sub_fetch(&rc.received_ptr[row_of(i)], 1, __ATOMIC_RELAXED))] = uint32_t(i);
#pragma omp parallel for schedule(static, 4096)
      for (std::ptrdiff_t u = 0; u < std::ptrdiff_t(n); ++u)
        sort_by_key(rc.received_order.data() + rc.received_ptr[size_t(u)],
                    rc.received_order.data() + rc.received_ptr[size_t(u) + 1], [](uint32_t i) { return i; });
    }

    // The slots, and the second pass: each own coupling's element number written into its row's
    // slot (downwards from the end of the own part), each other element's into `extra`.
    int64_t slots = 0;
#pragma omp parallel for schedule(static, 65536) reduction(+ : slots)
    for (std::ptrdiff_t u = 0; u < std::ptrdiff_t(n); ++u) slots += slot[size_t(u) + 1];
    if (slots > max_entries) throw InputError(too_many_nonzeros_message());
    prefix_sum(slot);
    prefix_sum(rc.extra_ptr);
    rc.extra.resize(size_t(rc.extra_ptr[n]));
    // Arrays of a row each (a 50M-node grid's rank: 17M rows), their pages faulted in by all threads
    // (mna/touched_vector.hpp) rather than zeroed by this one first.
    size_for_overwrite(out.G.col, size_t(slots));
    size_for_overwrite(out.G.val, size_t(slots));
    int32_t* col = out.G.col.data();
    // Each row's own couplings counted in its slot's last place (RowContributions::own_couplings()).
#pragma omp parallel for schedule(static, 65536)
    for (std::ptrdiff_t u = 0; u < std::ptrdiff_t(n); ++u) {
      col[slot[size_t(u) + 1] - 1] = cursor[size_t(u)];
      cursor[size_t(u)] += slot[size_t(u)];
    }
    // Any order: each row's lists are sorted back into element order below.
#pragma omp parallel
    {
      BatchedScatter batch;
#pragma omp for schedule(dynamic, 65536) nowait
      for (size_t k = 0; k < elements; ++k) {
        Ends x;
        if (!stamped_ends(nl.elements[k], sn, x)) continue;
        rows_of(x, [&](int32_t u, bool coupling) {
          if (!local(u)) return;
          const auto r = size_t(u - first_row);
          if (coupling) batch.place(&cursor[r], reinterpret_cast<uint32_t*>(col), uint32_t(k));
          else batch.place(&rc.extra_ptr[r], rc.extra.data(), uint32_t(k));
        });
      }
      batch.flush();
    }
    FillVector<int32_t>().swap(cursor);
    // Each row's own lists back in element order: the couplings at the start of its slot (cursor
    // came down to it).
#pragma omp parallel for schedule(static, 4096)
    for (std::ptrdiff_t u = 0; u < std::ptrdiff_t(n); ++u) {
      const int32_t couplings = RowContributions::own_couplings(col + slot[size_t(u)], slot[size_t(u) + 1] - slot[size_t(u)]);
      sort_by_key(col + slot[size_t(u)], col + slot[size_t(u)] + couplings, [](int32_t k) { return uint32_t(k); });
      sort_by_key(rc.extra.data() + rc.extra_ptr[size_t(u)], rc.extra.data() + rc.extra_ptr[size_t(u) + 1],
                  [](uint32_t k) { return k; });
    }
    times.by_row = times.watch.lap();
  });
  return rc;
}

// A row of this rank's on the cut (coupled to another rank's row), labelled with its component
// among this rank's rows.
struct CutRow {
  int32_t row;
  int32_t label;  // the component's smallest unknown; kAnchoredLabel for one holding a fixed node
};
struct CutEdge {
  int32_t label, other;  // a coupling from a row of component `label` to row `other` (> the row) of another rank
};
constexpr int32_t kAnchoredLabel = -1;

// The resistively connected parts of this rank's rows, found as assemble() writes them (as
// reduce() joins its parts while grouping, not in a pass of its own over G): each coupling to a
// higher row of this rank unites the two rows, and a conductance to a fixed node unites the row
// with element 0, which stands for every fixed node (reduce()'s ground), so a part holds a fixed
// node exactly when its root is 0. The rows coupled to other ranks' rows are listed meanwhile,
// in any order: check_floating() labels them once every part is joined.
struct RowComponents {
  explicit RowComponents(int32_t rows) : sets(rows + 1) {}
  ConcurrentUnionFind sets;        // element 0: the fixed nodes; element u + 1: local row u
  std::vector<CutRow> cut_rows;    // label: set by check_floating()
  std::vector<CutEdge> cut_edges;  // label: the row (global) until check_floating()

  int32_t part_of(int32_t u) { return sets.find(u + 1); }  // 0: anchored
};

// One thread's unions into RowComponents, queued and made 64 at a time: a union's
// compare-and-swap waits for every earlier store to reach the cache, and assemble() writes a row
// between two rows' unions (5M nodes, mpirun -np 2, one thread a rank, both ranks' CPU time:
// the unions 0.093 -> 0.041 s, the assembly with them 0.318 -> 0.284 s).
class QueuedUnions {
 public:
  explicit QueuedUnions(RowComponents& parts) : parts_(parts) {}
  void unite(int32_t a, int32_t b) {
    pairs_[pending_][0] = a, pairs_[pending_][1] = b;
    if (++pending_ == kBatch) flush();
  }
  void flush() {
    for (int i = 0; i < pending_; ++i) parts_.sets.unite(pairs_[i][0], pairs_[i][1]);
    pending_ = 0;
  }

 private:
  static constexpr int kBatch = 64;
  RowComponents& parts_;
  int32_t pairs_[kBatch][2];
  int pending_ = 0;
};

// One thread's share of the rows joined into RowComponents (as assemble() writes them, or after
// the stamp on a GPU): each row's unions queued, the rows and couplings on the cut listed, all
// published by publish().
class PartJoiner {
 public:
  PartJoiner(RowComponents& parts, int32_t first_row, int32_t rows) : parts_(parts), unions_(parts), first_(first_row), rows_(rows) {}
  // Local row u, its stored columns cols[0, count) (global, sorted); anchored: it has a conductance to a fixed node.
  void join(int32_t u, const int32_t* cols, int32_t count, bool anchored) {
    const int32_t global = first_ + u;
    if (anchored) unions_.unite(0, u + 1);
    bool on_cut = false;
    for (int32_t i = 0; i < count; ++i) {
      const int32_t j = cols[i];
      if (j <= global) {
        on_cut = on_cut || !local(j);
      } else if (local(j)) {
        unions_.unite(u + 1, j - first_ + 1);
      } else {
        on_cut = true;
        cut_edges_.push_back({global, j});
      }
    }
    if (on_cut) cut_rows_.push_back({global, 0});
  }
  void publish() {
    unions_.flush();
#pragma omp critical
    {
      parts_.cut_rows.insert(parts_.cut_rows.end(), cut_rows_.begin(), cut_rows_.end());
      parts_.cut_edges.insert(parts_.cut_edges.end(), cut_edges_.begin(), cut_edges_.end());
    }
  }

 private:
  bool local(int32_t j) const { return uint32_t(j - first_) < uint32_t(rows_); }
  RowComponents& parts_;
  QueuedUnions unions_;
  int32_t first_, rows_;
  std::vector<CutRow> cut_rows_;
  std::vector<CutEdge> cut_edges_;
};

// reduce()'s rows from the contributions (its stamp(), row by row in parallel), each written
// once over its slot of G's arrays (mna/row_slots.hpp): the slots' offsets are G.ptr as
// exchange_contributions() leaves it; they go to `slot`, and G.ptr[u + 1] becomes row u's
// length; when a row has parallel conductances its slot is longer, and close_row_gaps() moves
// the rows. Each row joins `parts` as it is written.
void assemble(const RowContributions& rc, OwnedRows& out, RowComponents& parts, FillVector<int32_t>& slot) {
  const int32_t n = out.rows();
  CsrMatrix& G = out.G;
  slot.swap(G.ptr);
  size_for_overwrite(G.ptr, size_t(n) + 1);  // every row's length written below
  G.ptr[0] = 0;
  size_for_overwrite(out.b, size_t(n));
#pragma omp parallel
  {
    std::vector<double> currents;                 // the row's current sources' terms, in element order
    std::vector<std::pair<int32_t, double>> row;  // its conductances to unknowns (neighbour, g)
    PartJoiner joiner(parts, out.first_unknown, n);
#pragma omp for schedule(dynamic, 4096) nowait
    for (int32_t u = 0; u < n; ++u) {
      const int32_t first = slot[size_t(u)];
      double d = 0, b = 0;
      bool anchored = false;
      currents.clear();
      row.clear();
      // Conductances summed as they come, in element order; current sources after them.
      rc.collect(size_t(u), G.col.data() + first, slot[size_t(u) + 1] - first, [&](const Contribution& c) {
        if (c.neighbour == kCurrent) {
          currents.push_back(c.delta);
          return;
        }
        d += c.g;
        b += c.delta;
        if (c.neighbour == kFixed) anchored = true;
        else row.push_back({c.neighbour, c.g});
      });  // the slot read before it is written below
      for (double t : currents) b += t;
      out.b[size_t(u)] = b;
      // By neighbour, element order among equals.
      sort_by_key(row.data(), row.data() + row.size(), [](const std::pair<int32_t, double>& x) { return x.first; });
      const int32_t global = out.first_unknown + u;
      int32_t at = first;
      bool diagonal_placed = false;
      for (const auto& [j, g] : row) {
        if (!diagonal_placed && j > global) {
          G.col[size_t(at)] = global, G.val[size_t(at++)] = d;
          diagonal_placed = true;
        }
        if (at > first && G.col[size_t(at) - 1] == j) {
          G.val[size_t(at) - 1] -= g;  // parallel to the previous conductance
        } else {
          G.col[size_t(at)] = j, G.val[size_t(at++)] = -g;
        }
      }
      if (!diagonal_placed) G.col[size_t(at)] = global, G.val[size_t(at++)] = d;
      G.ptr[size_t(u) + 1] = at - first;
      joiner.join(u, G.col.data() + first, at - first, anchored);
    }
    joiner.publish();
  }
}


// Two labels of cut components joined by a coupling across ranks: this rank's, and the other
// row's at its rank.
struct LabelPair {
  int32_t label, other;
};

// The distinct labels of a rank's cut rows, ascending.
std::vector<int32_t> distinct_labels(const std::vector<CutRow>& cut_rows) {
  std::vector<int32_t> labels;
  labels.reserve(cut_rows.size());
  for (const CutRow& c : cut_rows) labels.push_back(c.label);
  std::sort(labels.begin(), labels.end());
  labels.erase(std::unique(labels.begin(), labels.end()), labels.end());
  return labels;
}

// Each cut edge's other row labelled by the rank that owns it (one exchange there and back), the
// (label, other label) pairs then deduplicated: what the edges say of the components, in few records.
std::vector<LabelPair> label_cut_edges(RowComponents& parts, const std::vector<int32_t>& unknown_begin, MPI_Comm comm) {
  std::vector<CutEdge>& edges = parts.cut_edges;
  std::sort(edges.begin(), edges.end(), [](const CutEdge& a, const CutEdge& b) { return a.other < b.other; });
  const size_t ranks = unknown_begin.size() - 1;
  std::vector<int32_t> asked(edges.size());
  std::vector<int> counts(ranks, 0);
  for (size_t k = 0; k < edges.size(); ++k) {
    asked[k] = edges[k].other;
    ++counts[size_t(owner_of_row(unknown_begin, edges[k].other))];
  }
  // The rows asked are this rank's cut rows: G is symmetric, so a coupling the other way made each
  // one. A row that is none comes back as kNotCut.
  constexpr int32_t kNotCut = INT32_MIN;
  std::vector<CutRow> rows = parts.cut_rows;
  std::sort(rows.begin(), rows.end(), [](const CutRow& a, const CutRow& b) { return a.row < b.row; });
  const std::vector<int32_t> other_label = ask_owners(asked, counts, [&](int32_t row) {
    const auto it = std::lower_bound(rows.begin(), rows.end(), row, [](const CutRow& c, int32_t r) { return c.row < r; });
    return it == rows.end() || it->row != row ? kNotCut : it->label;
  }, comm);
  std::vector<LabelPair> pairs(edges.size());
  for (size_t k = 0; k < edges.size(); ++k) {
    if (other_label[k] == kNotCut) throw std::logic_error("reduce: G is not symmetric across ranks");
    pairs[k] = {edges[k].label, other_label[k]};
  }
  std::sort(pairs.begin(), pairs.end(), [](const LabelPair& a, const LabelPair& b) {
    return a.label != b.label ? a.label < b.label : a.other < b.other;
  });
  pairs.erase(std::unique(pairs.begin(), pairs.end(), [](const LabelPair& a, const LabelPair& b) {
                return a.label == b.label && a.other == b.other;
              }), pairs.end());
  return pairs;
}

// reduce()'s check_floating over the ranks: `parts` (assemble()'s) of each rank's rows, then those
// on the cut merged on rank 0 by their labels, the verdict the same on every rank.
void check_floating(const OwnedRows& out, RowComponents& parts, const RankNetlist& nl, const SuperNodes& sn, MPI_Comm comm) {
  const int32_t n = out.rows(), first = out.first_unknown;
  const auto local = [&](int32_t j) { return j >= first && j - first < n; };
  const auto label_of = [&](int32_t root) { return root == 0 ? kAnchoredLabel : first + root - 1; };
  std::vector<int32_t> cut_parts;  // the roots of the parts on the cut, ascending
  for (CutRow& c : parts.cut_rows) {
    const int32_t root = parts.part_of(c.row - first);
    c.label = label_of(root);
    cut_parts.push_back(root);
  }
  for (CutEdge& e : parts.cut_edges) e.label = label_of(parts.part_of(e.label - first));
  std::sort(cut_parts.begin(), cut_parts.end());
  const std::vector<int32_t> cut_labels = distinct_labels(parts.cut_rows);
  const std::vector<LabelPair> pairs = label_cut_edges(parts, out.unknown_begin, comm);

  // Rank 0: the cut components merged from the ranks' distinct labels and label pairs (a few per
  // rank where each rank's rows are one part or a few, however long the cut: at 50M nodes on 4
  // ranks, gathering every cut row and edge instead took 1.0-1.3 s); the labels of the lowest
  // floating one (ascending) to all.
  std::vector<int32_t> labels = gather_to(0, cut_labels, comm);
  const std::vector<LabelPair> all_pairs = gather_to(0, pairs, comm);
  std::vector<int32_t> floating_on_cut;
  if (nl.rank == 0) {
    std::sort(labels.begin(), labels.end());
    labels.erase(std::unique(labels.begin(), labels.end()), labels.end());
    const auto index = [&](int32_t label) {
      return int32_t(std::lower_bound(labels.begin(), labels.end(), label) - labels.begin());
    };
    ConcurrentUnionFind merged(int32_t(labels.size()));
    for (const LabelPair& p : all_pairs) merged.unite(index(p.label), index(p.other));
    merged.flatten();  // each root is its set's smallest label
    std::vector<uint8_t> merged_anchored(labels.size(), 0);
    for (int32_t i = 0; i < int32_t(labels.size()); ++i)
      merged_anchored[size_t(merged.root(i))] |= uint8_t(labels[size_t(i)] == kAnchoredLabel);
    for (int32_t i = 0; i < int32_t(labels.size()); ++i)
      if (merged.root(i) == i && !merged_anchored[size_t(i)]) {
        for (int32_t k = i; k < int32_t(labels.size()); ++k)
          if (merged.root(k) == i) floating_on_cut.push_back(labels[size_t(k)]);
        break;
      }
  }
  int count = int(floating_on_cut.size());
  MPI_Bcast(&count, 1, MPI_INT, 0, comm);
  floating_on_cut.resize(size_t(count));
  MPI_Bcast(floating_on_cut.data(), count, MPI_INT32_T, 0, comm);

  // A part not on the cut floats when its root is not 0; its root (its smallest row) is its own.
  int32_t floating = floating_on_cut.empty() ? INT32_MAX : floating_on_cut[0];
#pragma omp parallel for schedule(dynamic, 4096) reduction(min : floating)
  for (int32_t u = 0; u < n; ++u)
    if (first + u < floating && parts.part_of(u) == u + 1 && !std::binary_search(cut_parts.begin(), cut_parts.end(), u + 1))
      floating = first + u;
  MPI_Allreduce(MPI_IN_PLACE, &floating, 1, MPI_INT32_T, MPI_MIN, comm);
  if (floating == INT32_MAX) return;

  // The error: the netlist nodes of that component, and the name of its first unknown's node.
  const bool spans_ranks = !floating_on_cut.empty() && floating_on_cut[0] == floating;
  int64_t nodes = 0;
  for (int32_t u = 0; u < n; ++u) {
    const int32_t label = label_of(parts.part_of(u));
    if (spans_ranks ? std::binary_search(floating_on_cut.begin(), floating_on_cut.end(), label) : label == floating)
      nodes += sn.size_of(sn.first_node(first + u));
  }
  MPI_Allreduce(MPI_IN_PLACE, &nodes, 1, MPI_INT64_T, MPI_SUM, comm);
  std::vector<std::string> name(1);
  if (local(floating)) name[0] = std::string(nl.owned_names[sn.first_node(floating) - nl.first_node]);
  throw InputError(floating_message(nodes, merge_known_strings(name, comm)[0]));
}

#ifdef PGSIM_HAVE_NCCL
// The rows stamped on the GPU joined into `parts`, as assemble() joins them.
void join_parts(const OwnedRows& out, const std::vector<uint8_t>& anchored, RowComponents& parts) {
  const int32_t n = out.rows();
  const CsrMatrix& G = out.G;
#pragma omp parallel
  {
    PartJoiner joiner(parts, out.first_unknown, n);
#pragma omp for schedule(dynamic, 4096) nowait
    for (int32_t u = 0; u < n; ++u)
      joiner.join(u, G.col.data() + G.ptr[size_t(u)], G.ptr[size_t(u) + 1] - G.ptr[size_t(u)], anchored[size_t(u)] != 0);
    joiner.publish();
  }
}

// The rows stamped on the elements' GPU (gpu/device_stamp.hpp), the other ranks' records exchanged
// here; then joined into `parts`. The -v line's text. This rank's failures wait for `agreement`'s
// next agreement: one in the exchange (where a rank that failed before it agrees instead), and the
// caller's after the stamp.
std::string stamp_on_device(const RankNetlist& nl, const SuperNodes& sn, OwnedRows& out, RowComponents& parts,
                            gpu::DeviceElements& elements, MPI_Comm comm, FailureAgreement& agreement,
                            int64_t max_entries) {
  bool exchanged = false;
  const auto exchange = [&](const FillVector<Contribution>& send, const std::vector<int>& send_counts,
                            FillVector<Contribution>& received) {
    exchanged = true;
    agreement.agree();  // throws here on every rank where one failed before its exchange
    std::vector<int> recv_counts;
    all_to_all(send, send_counts, comm, recv_counts, received);
    size_t lower = 0;
    for (int q = 0; q < nl.rank; ++q) lower += size_t(recv_counts[size_t(q)]);
    return lower;
  };
  gpu::DeviceStampTimes times;
  std::vector<uint8_t> anchored;
  double joined = 0;
  agreement.run([&] {
    size_for_overwrite(anchored, size_t(out.rows()));
    size_for_overwrite(out.b, size_t(out.rows()));
    gpu::stamp_rows_on_device(elements, sn.lookup(), out.unknown_begin, nl.rank, exchange, out.G, out.b.data(),
                              anchored.data(), max_entries, times);
    Stopwatch watch;
    join_parts(out, anchored, parts);
    joined = watch.lap();
  });
  if (!exchanged) agreement.agree();  // this rank failed before its exchange, where the others agree
  return times.text() + fmt::format(", parts joined {:.3f} s", joined);
}
#endif

}  // namespace

OwnedRows stamp_owned_rows(const RankNetlist& nl, const SuperNodes& sn, MPI_Comm comm, gpu::DeviceElements* on_device,
                           int64_t max_entries) {
  if (max_entries > INT32_MAX) throw std::logic_error("stamp_owned_rows: max_entries beyond the index width");
  OwnedRows out;
  out.unknown_begin = sn.unknown_begin();
  out.first_unknown = out.unknown_begin[size_t(nl.rank)];
  out.G.rows = out.unknown_begin[size_t(nl.rank) + 1] - out.first_unknown;
  RowComponents parts(out.rows());
  // A rank's own failure (an index width passed, memory, its GPU) waits for the next agreement:
  // before the exchange, and before the floating check.
  FailureAgreement agreement(comm);
  if (on_device) {
#ifdef PGSIM_HAVE_NCCL
    const std::string detail = stamp_on_device(nl, sn, out, parts, *on_device, comm, agreement, max_entries);
    agreement.agree();
    Stopwatch watch;
    check_floating(out, parts, nl, sn, comm);
    log_step(comm, fmt::format("stamp on rank {} {}, floating check {:.3f} s", nl.rank, detail, watch.lap()));
    return out;
#else
    throw std::logic_error("stamp_owned_rows: this build has no GPU stamp (it needs CUDA, MPI and NCCL)");
#endif
  }
  StampTimes times;
  {
    FillVector<int32_t> slot;
    {
      const RowContributions rc = exchange_contributions(nl, sn, out, comm, times, agreement, max_entries);
      agreement.run([&] { assemble(rc, out, parts, slot); });
    }
    // The contributions freed first: the rare case holds G twice.
    agreement.run([&] { close_row_gaps(out.G, [&slot](int32_t u) { return size_t(slot[size_t(u)]); }); });
    times.assemble = times.watch.lap();
  }
  agreement.agree();
  check_floating(out, parts, nl, sn, comm);
  times.floating = times.watch.lap();
  log_step(comm, fmt::format("stamp on rank {}: contributions {:.3f} s ({} element ends of its rows, {} contributions sent), "
                             "exchange {:.3f} s, grouped by row {:.3f} s, rows assembled {:.3f} s, floating check {:.3f} s",
                             nl.rank, times.contributions, times.kept, times.sent, times.exchange, times.by_row, times.assemble,
                             times.floating));
  return out;
}

}  // namespace pgsim::dist
