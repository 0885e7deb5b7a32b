#include "dist/owned_rows.hpp"

#include <omp.h>

#include <algorithm>
#include <climits>
#include <numeric>
#include <stdexcept>
#include <string>

#include "dist/record_exchange.hpp"
#include "mna/concurrent_union_find.hpp"
#include "mna/reduce.hpp"
#include "parser/input_error.hpp"

namespace pgsim::dist {
namespace {

// One element end's share of one row of G x = b.
struct Contribution {
  int32_t row;        // global unknown
  int32_t neighbour;  // >= 0: a conductance to that unknown; kFixed: to a fixed node; kCurrent: a current source
  double g;           // the conductance (0 for a current source)
  double delta;       // added to the row's b
};
constexpr int32_t kFixed = -1, kCurrent = -2;


// Calls emit(c) for each contribution of element e (DC: resistors and current sources stamp),
// with reduce()'s arithmetic: b -= t there is b += -t here, the same double.
template <class Emit>
void contributions(const Element& e, const SuperNodes& sn, Emit emit) {
  if (!stamps(e, nullptr)) return;  // no conductance: only the elements it names are looked up
  const int32_t up = sn.unknown_of(e.plus), um = sn.unknown_of(e.minus);
  if (e.kind == ElementKind::CurrentSource) {
    // SPICE: a positive source drives current out of its plus node into minus; a row holding
    // both ends gets both terms, in this order.
    if (up >= 0) emit(Contribution{up, kCurrent, 0.0, -e.value});
    if (um >= 0) emit(Contribution{um, kCurrent, 0.0, e.value});
    return;
  }
  const double g = element_conductance(e, nullptr);
  if (up == um) return;  // across a super-node: no current flows
  const double op = sn.offset_of(e.plus), om = sn.offset_of(e.minus);
  for (int side = 0; side < 2; ++side) {
    const int32_t u = side == 0 ? up : um, other = side == 0 ? um : up;
    if (u < 0) continue;
    const double o_self = side == 0 ? op : om, o_other = side == 0 ? om : op;
    if (other >= 0) emit(Contribution{u, other, g, -(g * (o_self - o_other))});
    else emit(Contribution{u, kFixed, g, g * (o_other - o_self)});
  }
}

// The contributions to this rank's rows in element order: those of lower ranks (received), this
// rank's own, then those of higher ranks; grouped by local row, keeping that order in each.
struct RowContributions {
  std::vector<Contribution> received, local;
  size_t lower = 0;  // received from lower ranks
  std::vector<size_t> ptr;
  std::vector<uint32_t> order;  // row i's are at(order[ptr[i] .. ptr[i + 1]))

  const Contribution& at(size_t i) const {
    return i < lower ? received[i] : i < lower + local.size() ? local[i - lower] : received[i - local.size()];
  }
};

RowContributions exchange_contributions(const RankNetlist& nl, const SuperNodes& sn, const OwnedRows& out,
                                        MPI_Comm comm) {
  const auto ranks = size_t(nl.ranks);
  RowContributions rc;
  // In parallel, order kept: thread t takes the t-th contiguous range of elements, counts its
  // contributions per destination, then writes them after those of threads before it.
  const int threads = omp_get_max_threads();
  const auto destinations = ranks + 1;  // the ranks, then this rank's own (kept apart from the send buffer)
  std::vector<size_t> count(size_t(threads) * destinations, 0);  // [thread][destination], then where it writes
  std::vector<Contribution> send;
  std::vector<int> send_counts(ranks, 0);
  const size_t elements = nl.elements.size();
#pragma omp parallel num_threads(threads)
  {
    const auto t = size_t(omp_get_thread_num());
    const size_t from = elements * t / size_t(threads), to = elements * (t + 1) / size_t(threads);
    size_t* mine = &count[t * destinations];
    const auto destination = [&](const Contribution& c) {
      const int q = owner_of_row(out.unknown_begin, c.row);
      return q == nl.rank ? ranks : size_t(q);
    };
    for (size_t k = from; k < to; ++k)
      contributions(nl.elements[k], sn, [&](const Contribution& c) { ++mine[destination(c)]; });
#pragma omp barrier
#pragma omp single
    {
      size_t at = 0;  // the send buffer: destination by destination, thread by thread within one
      for (size_t q = 0; q < destinations; ++q) {
        if (q == ranks) at = 0;  // this rank's own: their own array
        const size_t first = at;
        for (size_t u = 0; u < size_t(threads); ++u) {
          const size_t n = count[u * destinations + q];
          count[u * destinations + q] = at;
          at += n;
        }
        if (q < ranks) send_counts[q] = record_count(at - first);
      }
      send.resize(size_t(std::accumulate(send_counts.begin(), send_counts.end(), int64_t(0))));
      rc.local.resize(at);
    }
    for (size_t k = from; k < to; ++k)
      contributions(nl.elements[k], sn, [&](const Contribution& c) {
        const size_t q = destination(c);
        (q == ranks ? rc.local : send)[mine[q]++] = c;
      });
  }
  std::vector<int> recv_counts;
  rc.received = all_to_all(send, send_counts, comm, recv_counts);
  std::vector<Contribution>().swap(send);
  for (int q = 0; q < nl.rank; ++q) rc.lower += size_t(recv_counts[size_t(q)]);

  // A stable counting sort by local row, in parallel: counted and placed with atomic increments
  // (any order within a row), then each row's few entries sorted back into contribution order.
  const size_t total = rc.received.size() + rc.local.size();
  if (total > UINT32_MAX) throw InputError("a rank's rows have more than 2^32 element ends, beyond this build's index width");
  const auto n = size_t(out.rows());
  const auto row_of = [&](size_t i) { return size_t(rc.at(i).row - out.first_unknown); };
  rc.ptr.assign(n + 1, 0);
#pragma omp parallel for schedule(static, 65536)
  for (std::ptrdiff_t i = 0; i < std::ptrdiff_t(total); ++i) __atomic_fetch_add(&rc.ptr[row_of(size_t(i)) + 1], size_t(1), __ATOMIC_RELAXED);
  for (size_t i = 0; i < n; ++i) rc.ptr[i + 1] += rc.ptr[i];
  rc.order.resize(total);
  std::vector<size_t> fill(rc.ptr.begin(), rc.ptr.end() - 1);
#pragma omp parallel for schedule(static, 65536)
  for (std::ptrdiff_t i = 0; i < std::ptrdiff_t(total); ++i)
    rc.order[__atomic_fetch_add(&fill[row_of(size_t(i))], size_t(1), __ATOMIC_RELAXED)] = uint32_t(i);
#pragma omp parallel for schedule(dynamic, 4096)
  for (std::ptrdiff_t u = 0; u < std::ptrdiff_t(n); ++u)
    std::sort(rc.order.begin() + std::ptrdiff_t(rc.ptr[size_t(u)]), rc.order.begin() + std::ptrdiff_t(rc.ptr[size_t(u) + 1]));
  return rc;
}

// Row u's conductances to unknowns (neighbour, g), sorted by neighbour, element order among equals.
void sorted_couplings(const RowContributions& rc, size_t u, std::vector<std::pair<int32_t, double>>& row) {
  row.clear();
  for (size_t p = rc.ptr[u]; p < rc.ptr[u + 1]; ++p) {
    const Contribution& c = rc.at(rc.order[p]);
    if (c.neighbour >= 0) row.push_back({c.neighbour, c.g});
  }
  std::stable_sort(row.begin(), row.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
}

// reduce()'s rows from the contributions (its stamp(), row by row in parallel). anchored[u]: row
// u has a conductance to a fixed node.
void assemble(const RowContributions& rc, OwnedRows& out, std::vector<uint8_t>& anchored) {
  const int32_t n = out.rows();
  CsrMatrix& G = out.G;
  G.ptr.assign(size_t(n) + 1, 0);
  out.b.assign(size_t(n), 0.0);
  anchored.assign(size_t(n), 0);
  std::vector<double> diag(static_cast<size_t>(n));
#pragma omp parallel
  {
    std::vector<std::pair<int32_t, double>> row;
#pragma omp for schedule(dynamic, 4096)
    for (int32_t u = 0; u < n; ++u) {
      double d = 0, b = 0;
      for (size_t p = rc.ptr[size_t(u)]; p < rc.ptr[size_t(u) + 1]; ++p) {  // conductances first
        const Contribution& c = rc.at(rc.order[p]);
        if (c.neighbour == kCurrent) continue;
        d += c.g;
        b += c.delta;
        if (c.neighbour == kFixed) anchored[size_t(u)] = 1;
      }
      for (size_t p = rc.ptr[size_t(u)]; p < rc.ptr[size_t(u) + 1]; ++p) {  // then current sources
        const Contribution& c = rc.at(rc.order[p]);
        if (c.neighbour == kCurrent) b += c.delta;
      }
      diag[size_t(u)] = d;
      out.b[size_t(u)] = b;
      sorted_couplings(rc, size_t(u), row);
      int32_t length = 1;
      for (size_t i = 0; i < row.size(); ++i) length += i == 0 || row[i].first != row[i - 1].first;
      G.ptr[size_t(u) + 1] = length;
    }
  }
  int64_t nnz = 0;
  for (int32_t u = 0; u < n; ++u) {
    nnz += G.ptr[size_t(u) + 1];
    if (nnz > INT32_MAX) throw InputError("the system has more than 2^31 nonzeros, beyond this build's index width");
    G.ptr[size_t(u) + 1] = int32_t(nnz);
  }
  G.col.resize(size_t(nnz));
  G.val.resize(size_t(nnz));
#pragma omp parallel
  {
    std::vector<std::pair<int32_t, double>> row;
#pragma omp for schedule(dynamic, 4096)
    for (int32_t u = 0; u < n; ++u) {
      sorted_couplings(rc, size_t(u), row);
      const int32_t global = out.first_unknown + u;
      int32_t at = G.ptr[size_t(u)];
      bool diagonal_placed = false;
      for (const auto& [j, g] : row) {
        if (!diagonal_placed && j > global) {
          G.col[size_t(at)] = global, G.val[size_t(at++)] = diag[size_t(u)];
          diagonal_placed = true;
        }
        if (at > G.ptr[size_t(u)] && G.col[size_t(at) - 1] == j) {
          G.val[size_t(at) - 1] -= g;  // parallel to the previous conductance
        } else {
          G.col[size_t(at)] = j, G.val[size_t(at++)] = -g;
        }
      }
      if (!diagonal_placed) G.col[size_t(at)] = global, G.val[size_t(at)] = diag[size_t(u)];
    }
  }
}

// A row of another rank's graph on the cut, labelled with its rank-local component.
struct CutRow {
  int32_t row, label;  // label: the component's smallest unknown
  int32_t anchored;
};
struct CutEdge {
  int32_t label, other;  // a coupling from a row of component `label` to row `other` (> the row)
};

// reduce()'s check_floating over the ranks: components of each rank's rows, then those touching
// the cut merged on rank 0 (they are few), the verdict the same on every rank.
void check_floating(const OwnedRows& out, std::vector<uint8_t>& anchored, const RankNetlist& nl, const SuperNodes& sn,
                    MPI_Comm comm) {
  const CsrMatrix& G = out.G;
  const int32_t n = G.rows, first = out.first_unknown;
  const auto local = [&](int32_t j) { return j >= first && j - first < n; };
  ConcurrentUnionFind components(n);
  std::vector<uint8_t> on_cut(size_t(n), 0);  // per root: the component couples to another rank
#pragma omp parallel for schedule(dynamic, 4096)
  for (int32_t u = 0; u < n; ++u)
    for (int32_t k = G.ptr[size_t(u)]; k < G.ptr[size_t(u) + 1]; ++k)
      if (local(G.col[size_t(k)]) && G.col[size_t(k)] - first > u) components.unite(u, G.col[size_t(k)] - first);
  components.flatten();
  std::vector<CutRow> cut_rows;
  std::vector<CutEdge> cut_edges;
  // Flags only go from 0 to 1: concurrent stores of 1 to one root lose nothing.
#pragma omp parallel for schedule(static, 4096)
  for (int32_t u = 0; u < n; ++u) {
    const int32_t r = components.root(u);
    if (__atomic_load_n(&anchored[size_t(u)], __ATOMIC_RELAXED)) __atomic_store_n(&anchored[size_t(r)], uint8_t(1), __ATOMIC_RELAXED);
    for (int32_t k = G.ptr[size_t(u)]; k < G.ptr[size_t(u) + 1]; ++k)
      if (!local(G.col[size_t(k)])) __atomic_store_n(&on_cut[size_t(r)], uint8_t(1), __ATOMIC_RELAXED);
  }
  for (int32_t u = 0; u < n; ++u) {
    const int32_t r = components.root(u);
    bool boundary = false;
    for (int32_t k = G.ptr[size_t(u)]; k < G.ptr[size_t(u) + 1]; ++k) {
      const int32_t j = G.col[size_t(k)];
      if (local(j)) continue;
      boundary = true;
      if (j > first + u) cut_edges.push_back({first + r, j});
    }
    if (boundary) cut_rows.push_back({first + u, first + r, anchored[size_t(r)]});
  }

  // Rank 0: the cut components merged; the labels of the lowest floating one (ascending) to all.
  std::vector<CutRow> all_rows = gather_to(0, cut_rows, comm);
  std::vector<CutEdge> all_edges = gather_to(0, cut_edges, comm);
  std::vector<int32_t> floating_on_cut;
  if (nl.rank == 0) {
    std::sort(all_rows.begin(), all_rows.end(), [](const CutRow& a, const CutRow& b) { return a.row < b.row; });
    std::vector<int32_t> labels;
    for (const CutRow& c : all_rows) labels.push_back(c.label);
    std::sort(labels.begin(), labels.end());
    labels.erase(std::unique(labels.begin(), labels.end()), labels.end());
    const auto index = [&](int32_t label) {
      return int32_t(std::lower_bound(labels.begin(), labels.end(), label) - labels.begin());
    };
    ConcurrentUnionFind merged(int32_t(labels.size()));
    for (const CutEdge& e : all_edges) {
      const auto it = std::lower_bound(all_rows.begin(), all_rows.end(), e.other,
                                       [](const CutRow& c, int32_t row) { return c.row < row; });
      if (it == all_rows.end() || it->row != e.other) throw std::logic_error("reduce: G is not symmetric across ranks");
      merged.unite(index(e.label), index(it->label));
    }
    merged.flatten();  // each root is its set's smallest label
    std::vector<uint8_t> merged_anchored(labels.size(), 0);
    for (const CutRow& c : all_rows) merged_anchored[size_t(merged.root(index(c.label)))] |= uint8_t(c.anchored);
    for (int32_t i = 0; i < int32_t(labels.size()); ++i)
      if (merged.root(i) == i && !merged_anchored[size_t(i)]) {
        for (int32_t k = i; k < int32_t(labels.size()); ++k)
          if (merged.root(k) == i) floating_on_cut.push_back(labels[size_t(k)]);
        break;
      }
  }
  std::vector<CutRow>().swap(all_rows);
  std::vector<CutEdge>().swap(all_edges);
  int count = int(floating_on_cut.size());
  MPI_Bcast(&count, 1, MPI_INT, 0, comm);
  floating_on_cut.resize(size_t(count));
  MPI_Bcast(floating_on_cut.data(), count, MPI_INT32_T, 0, comm);

  int32_t floating = floating_on_cut.empty() ? INT32_MAX : floating_on_cut[0];
  for (int32_t u = 0; u < n; ++u)
    if (components.root(u) == u && !on_cut[size_t(u)] && !anchored[size_t(u)]) floating = std::min(floating, first + u);
  MPI_Allreduce(MPI_IN_PLACE, &floating, 1, MPI_INT32_T, MPI_MIN, comm);
  if (floating == INT32_MAX) return;

  // The error: the netlist nodes of that component, and the name of its first unknown's node.
  const bool spans_ranks = !floating_on_cut.empty() && floating_on_cut[0] == floating;
  int64_t nodes = 0;
  for (int32_t u = 0; u < n; ++u) {
    const int32_t label = first + components.root(u);
    if (spans_ranks ? std::binary_search(floating_on_cut.begin(), floating_on_cut.end(), label) : label == floating)
      nodes += sn.size_of(sn.first_node(first + u));
  }
  MPI_Allreduce(MPI_IN_PLACE, &nodes, 1, MPI_INT64_T, MPI_SUM, comm);
  std::vector<std::string> name(1);
  if (local(floating)) name[0] = std::string(nl.owned_names[sn.first_node(floating) - nl.first_node]);
  throw InputError(floating_message(nodes, merge_known_strings(name, comm)[0]));
}

}  // namespace

OwnedRows stamp_owned_rows(const RankNetlist& nl, const SuperNodes& sn, MPI_Comm comm) {
  OwnedRows out;
  out.unknown_begin = sn.unknown_begin();
  out.first_unknown = out.unknown_begin[size_t(nl.rank)];
  out.G.rows = out.unknown_begin[size_t(nl.rank) + 1] - out.first_unknown;
  std::vector<uint8_t> anchored;
  {
    const RowContributions rc = exchange_contributions(nl, sn, out, comm);
    assemble(rc, out, anchored);
  }
  check_floating(out, anchored, nl, sn, comm);
  return out;
}

}  // namespace pgsim::dist
