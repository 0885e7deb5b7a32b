#include "dist/row_aggregates.hpp"

#include <omp.h>

#include <algorithm>
#include <utility>

#include "dist/partition.hpp"
#include "dist/record_exchange.hpp"

namespace pgsim::dist {
namespace {

// A graph as one round of contraction reads it: this rank's vertices [first, first + n), their
// edges through visit(i, f), f(global neighbour, weight) for each (no self loop), their weights
// through size(i).
template <class Visit, class Size>
struct GraphView {
  int64_t first;
  int32_t n;
  Visit visit;
  Size size;
  bool local(int64_t j) const { return j >= first && j - first < n; }
};
template <class Visit, class Size>
GraphView<Visit, Size> view(int64_t first, int32_t n, Visit visit, Size size) {
  return {first, n, std::move(visit), std::move(size)};
}

// The greedy aggregates of the header, by local number: one pass in vertex order (each vertex's
// aggregate depends on those before it).
template <class View>
std::vector<int32_t> greedy_aggregates(const View& g, int32_t& count) {
  std::vector<int32_t> agg(size_t(g.n), -1);
  count = 0;
  for (int32_t i = 0; i < g.n; ++i) {
    if (agg[size_t(i)] >= 0) continue;
    int32_t joined = -1, taken = 0;
    g.visit(i, [&](int64_t j, int64_t) {
      if (!g.local(j)) return;
      int32_t& a = agg[size_t(j - g.first)];
      if (a < 0) a = count, ++taken;
      else if (joined < 0) joined = a;
    });
    agg[size_t(i)] = taken == 0 && joined >= 0 ? joined : count++;  // alone: into its first neighbour's
  }
  return agg;
}

// One round: g's vertices grouped into aggregates (`aggregate`: per vertex, its local number),
// and the aggregates' graph, numbered rank after rank. Collective: the ranks' first vertices,
// and the aggregates of g's neighbours on other ranks, asked of their owners and answered.
template <class View>
AggregateGraph contract(const View& g, MPI_Comm comm) {
  AggregateGraph out;
  int32_t count = 0;
  out.aggregate_of_row = greedy_aggregates(g, count);
  const std::vector<int32_t>& agg = out.aggregate_of_row;
  int64_t mine = count;
  MPI_Exscan(&mine, &out.first, 1, MPI_INT64_T, MPI_SUM, comm);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) out.first = 0;  // MPI_Exscan leaves rank 0's undefined

  // The other ranks' vertices that g's edges reach, ascending, and their aggregates.
  std::vector<int64_t> asked;
#pragma omp parallel
  {
    std::vector<int64_t> mine_asked;  // any order: sorted below
#pragma omp for schedule(static, 4096) nowait
    for (int32_t i = 0; i < g.n; ++i)
      g.visit(i, [&](int64_t j, int64_t) {
        if (!g.local(j)) mine_asked.push_back(j);
      });
#pragma omp critical
    asked.insert(asked.end(), mine_asked.begin(), mine_asked.end());
  }
  std::sort(asked.begin(), asked.end());
  asked.erase(std::unique(asked.begin(), asked.end()), asked.end());
  const std::vector<int64_t> firsts = all_gather(std::vector<int64_t>{g.first}, comm);
  std::vector<int> counts(firsts.size(), 0);
  for (int64_t j : asked) ++counts[size_t(std::upper_bound(firsts.begin(), firsts.end(), j) - firsts.begin() - 1)];
  const std::vector<int64_t> answer =
      ask_owners(asked, counts, [&](int64_t j) { return out.first + agg[size_t(j - g.first)]; }, comm);
  const auto aggregate_of = [&](int64_t j) {
    if (g.local(j)) return out.first + agg[size_t(j - g.first)];
    return answer[size_t(std::lower_bound(asked.begin(), asked.end(), j) - asked.begin())];
  };

  // Each aggregate's vertices (a counting sort), its weight their sum, its edges on its own
  // thread: its vertices' edges to other aggregates, sorted and summed. Two passes, the degrees first.
  out.rows.assign(size_t(count), 0);
  std::vector<int64_t> member_ptr(size_t(count) + 1, 0);
  for (int32_t i = 0; i < g.n; ++i) out.rows[size_t(agg[size_t(i)])] += g.size(i), ++member_ptr[size_t(agg[size_t(i)]) + 1];
  for (int32_t a = 0; a < count; ++a) member_ptr[size_t(a) + 1] += member_ptr[size_t(a)];
  std::vector<int32_t> members(size_t(g.n));
  {
    std::vector<int64_t> at(member_ptr.begin(), member_ptr.end() - 1);
    for (int32_t i = 0; i < g.n; ++i) members[size_t(at[size_t(agg[size_t(i)])]++)] = i;
  }
  const auto edges_of = [&](int32_t a, std::vector<std::pair<int64_t, int64_t>>& edges) {
    edges.clear();
    const int64_t self = out.first + a;
    for (int64_t p = member_ptr[size_t(a)]; p < member_ptr[size_t(a) + 1]; ++p)
      g.visit(members[size_t(p)], [&](int64_t j, int64_t w) {
        const int64_t b = aggregate_of(j);
        if (b != self) edges.emplace_back(b, w);
      });
    std::sort(edges.begin(), edges.end());
    size_t kept = 0;  // one edge per neighbour, its weights summed
    for (size_t e = 0; e < edges.size(); ++e) {
      if (kept > 0 && edges[kept - 1].first == edges[e].first) edges[kept - 1].second += edges[e].second;
      else edges[kept++] = edges[e];
    }
    edges.resize(kept);
  };
  out.ptr.assign(size_t(count) + 1, 0);
#pragma omp parallel
  {
    std::vector<std::pair<int64_t, int64_t>> edges;
#pragma omp for schedule(dynamic, 1024)
    for (int32_t a = 0; a < count; ++a) {
      edges_of(a, edges);
      out.ptr[size_t(a) + 1] = int64_t(edges.size());
    }
  }
  for (int32_t a = 0; a < count; ++a) out.ptr[size_t(a) + 1] += out.ptr[size_t(a)];
  out.adjacent.resize(size_t(out.ptr.back()));
  out.weight.resize(size_t(out.ptr.back()));
#pragma omp parallel
  {
    std::vector<std::pair<int64_t, int64_t>> edges;
#pragma omp for schedule(dynamic, 1024)
    for (int32_t a = 0; a < count; ++a) {
      edges_of(a, edges);
      for (size_t e = 0; e < edges.size(); ++e) {
        out.adjacent[size_t(out.ptr[size_t(a)]) + e] = edges[e].first;
        out.weight[size_t(out.ptr[size_t(a)]) + e] = edges[e].second;
      }
    }
  }
  return out;
}

}  // namespace

AggregateGraph aggregate_rows(const DistributedRows& mine, int rounds, MPI_Comm comm) {
  const CsrMatrix& m = mine.rows;
  const int64_t first = mine.first_row;
  double weakest = weakest_coupling(m, first);
  MPI_Allreduce(MPI_IN_PLACE, &weakest, 1, MPI_DOUBLE, MPI_MIN, comm);

  // Round 1 reads the rows themselves (a vertex per row, weight 1, no diagonal).
  AggregateGraph g = contract(
      view(first, m.rows,
           [&](int32_t i, auto&& f) {
             for (int32_t k = m.ptr[size_t(i)]; k < m.ptr[size_t(i) + 1]; ++k)
               if (m.col[size_t(k)] != first + i) f(int64_t(m.col[size_t(k)]), int64_t(coupling_weight(m.val[size_t(k)], weakest)));
           },
           [](int32_t) { return int64_t(1); }),
      comm);
  // Each later round the previous round's aggregates' graph; each row's aggregate followed up.
  for (int r = 1; r < rounds; ++r) {
    const AggregateGraph& h = g;
    AggregateGraph next = contract(
        view(h.first, int32_t(h.aggregates()),
             [&](int32_t a, auto&& f) {
               for (int64_t e = h.ptr[size_t(a)]; e < h.ptr[size_t(a) + 1]; ++e) f(h.adjacent[size_t(e)], h.weight[size_t(e)]);
             },
             [&](int32_t a) { return h.rows[size_t(a)]; }),
        comm);
    for (int32_t& a : g.aggregate_of_row) a = next.aggregate_of_row[size_t(a)];
    next.aggregate_of_row = std::move(g.aggregate_of_row);
    g = std::move(next);
  }
  return g;
}

}  // namespace pgsim::dist
