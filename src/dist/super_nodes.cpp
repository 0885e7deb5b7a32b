#include "dist/super_nodes.hpp"

#include <omp.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <stdexcept>

#include "dist/byte_exchange.hpp"
#include "dist/record_exchange.hpp"
#include "dist/step_log.hpp"
#include "mna/concurrent_union_find.hpp"
#include "mna/reduce.hpp"
#include "mna/source_loop.hpp"
#include "mna/stopwatch.hpp"
#include "mna/touched_vector.hpp"
#include "parser/default_init.hpp"
#include "parser/input_error.hpp"
#include "parser/shown.hpp"

namespace pgsim::dist {
namespace {

// Who owns a node: the rank whose range holds it; ground: rank 0 (which merges ground's set).
struct NodeOwners {
  std::vector<uint32_t> first;  // per rank: its first node
  int operator()(uint32_t node) const {
    return node == 0 ? 0 : int(std::upper_bound(first.begin(), first.end(), node) - first.begin()) - 1;
  }
  // Records for the owners of their nodes, `node_of(record)` ascending: each owner's are one run,
  // so its count is found by binary search (ground, node 0, is first and rank 0's).
  template <class Records, class NodeOf>
  std::vector<int> counts(const Records& records, NodeOf node_of) const {
    std::vector<int> n(first.size(), 0);
    const auto start = [&](size_t q) {  // the first record of rank q's run
      if (q == 0) return records.begin();
      if (q == first.size()) return records.end();
      return std::partition_point(records.begin(), records.end(), [&](const auto& r) { return node_of(r) < first[q]; });
    };
    for (size_t q = 0; q < first.size(); ++q) n[q] = record_count(size_t(start(q + 1) - start(q)));
    return n;
  }
};

struct Touch {  // a rank's merging elements touch `node`, which its local set with first node `first` holds
  uint32_t node, first;
};
struct Link {  // two local sets (by their first nodes) that share a node
  uint32_t a, b;
};
struct RoutedEdge {  // a merging element, sent to the rank merging its set
  uint32_t index;    // among all ranks' merging elements, in element order
  uint32_t plus, minus, is_short;
  double forced;
};
struct NodeAnswer {  // a member node's super-node, from the rank that merged it to the node's owner
  uint32_t node, first;  // first: the set's first node; 0: ground's set (fixed)
  uint32_t size, unused;  // unused: 0 (trivial, so FillVectors of answers are not zeroed first)
  double offset;
};
// Records sent to the ranks that use them (step 2's merging elements, step 3's answers). This
// rank's own share (nearly all of them where each net lies mostly on one rank: 7.5M elements and
// 15M answers of a 50M-node grid's rank, 24 bytes each) neither travels nor is copied: it stays
// in `made`, where it was written, and is read there through view(); its place in `received` is
// never written (nor paged in).
template <class T>
struct Delivered {
  FillVector<T> made;  // grouped by destination rank
  std::vector<uint64_t> made_counts, received_counts;
  FillVector<T> received;

  Delivered() = default;
  // Collective: made_counts[q] of `made` for rank q.
  Delivered(FillVector<T> records, const std::vector<int>& counts, MPI_Comm comm)
      : made(std::move(records)), made_counts(counts.begin(), counts.end()),
        received_counts(exchange_counts(made_counts, comm)),
        received(exchange<T>(made, made_counts, received_counts, comm, OwnShare::kLeft)) {}
  uint64_t size() const { return received.size(); }
  ReceivedView<T> view(int rank) const { return {made.data(), made_counts, received.data(), received_counts, rank}; }
};
using Answers = Delivered<NodeAnswer>;  // by owner, ascending node order

// Step 1's local sets, kept for step 2: most sets lie whole on the rank that merges them, which
// then need not find them again.
struct LocalSets {
  NodeSubset touched;          // the nodes this rank's merging elements touch
  std::vector<uint32_t> node;  // touched's members, ascending
  ConcurrentUnionFind sets{0};  // over node's indices, each set's root its smallest member
  NodeSubset merged_here;       // unranked: the touched nodes of the sets this rank merges
};

// Step 1: the first node of each merging element's set (edges: this rank's, element order), and
// `local`, the rank's local sets.
FillVector<uint32_t> set_firsts(const FillVector<MergeEdge>& edges, uint32_t total_nodes, const NodeOwners& owner,
                                 int rank, MPI_Comm comm, uint64_t& link_count, LocalSets& local) {
  const auto m = std::ptrdiff_t(edges.size());
  NodeSubset& touched = local.touched;
  touched = NodeSubset(0, total_nodes);
#pragma omp parallel
  {
    // Consecutive elements' plus ends, and their minus ends, mostly share a word (vias in a row).
    NodeSubset::Marker plus(touched), minus(touched);
#pragma omp for schedule(static, 65536)
    for (std::ptrdiff_t i = 0; i < m; ++i) plus.mark(edges[size_t(i)].plus), minus.mark(edges[size_t(i)].minus);
  }
  touched.rank();
  local.node = touched.members();
  const std::vector<uint32_t>& node = local.node;
  local.sets = ConcurrentUnionFind(int32_t(node.size()));
#pragma omp parallel for schedule(static, 65536)
  for (std::ptrdiff_t i = 0; i < m; ++i)
    local.sets.unite(int32_t(touched.index(edges[size_t(i)].plus)), int32_t(touched.index(edges[size_t(i)].minus)));
  local.sets.flatten();  // each set's root is its smallest member: its first node
  const auto local_first = [&](uint32_t v) { return node[size_t(local.sets.root(int32_t(touched.index(v))))]; };

  // The ends owned elsewhere, to their owners, who link the sets of all ranks that touch one node.
  // Those below and above this rank's nodes (ground counts as rank 0's): a prefix and a suffix.
  const auto ranks = owner.first.size();
  const auto own_from = std::lower_bound(node.begin(), node.end(), rank == 0 ? 0 : owner.first[size_t(rank)]) - node.begin();
  const auto own_to = std::lower_bound(node.begin(), node.end(), size_t(rank) + 1 < ranks ? owner.first[size_t(rank) + 1] : total_nodes) - node.begin();
  const auto elsewhere = std::ptrdiff_t(node.size()) - (own_to - own_from);
  FillVector<Touch> touches(static_cast<size_t>(elsewhere));  // written below, on all threads
#pragma omp parallel for schedule(static, 65536)
  for (std::ptrdiff_t k = 0; k < elsewhere; ++k) {
    const uint32_t v = node[size_t(k < own_from ? k : k + (own_to - own_from))];
    touches[size_t(k)] = {v, local_first(v)};
  }
  std::vector<int> recv_counts;
  FillVector<Touch> heard;
  all_to_all(touches, owner.counts(touches, [](const Touch& t) { return t.node; }), comm, recv_counts, heard);
  FillVector<Touch>().swap(touches);
  // By node, each rank's in the order sent: each rank's touches are one ascending run (from
  // `node`), so merging the runs in turn sorts them stably, in linear passes rather than a sort.
  size_t merged_to = 0;
  for (int c : recv_counts) {
    std::inplace_merge(heard.begin(), heard.begin() + std::ptrdiff_t(merged_to), heard.begin() + std::ptrdiff_t(merged_to + size_t(c)),
                       [](const Touch& x, const Touch& y) { return x.node < y.node; });
    merged_to += size_t(c);
  }
  std::vector<Link> links;
  for (size_t i = 0; i < heard.size();) {
    const uint32_t v = heard[i].node, anchor = touched.contains(v) ? local_first(v) : heard[i].first;
    for (; i < heard.size() && heard[i].node == v; ++i)
      if (heard[i].first != anchor) links.push_back({anchor, heard[i].first});
  }
  FillVector<Touch>().swap(heard);
  links = all_gather(links, comm);
  link_count = links.size();

  // The links joined on every rank: a set's first node is the smallest of its local sets' first nodes.
  std::vector<uint32_t> linked;
  for (const Link& l : links) linked.push_back(l.a), linked.push_back(l.b);
  std::sort(linked.begin(), linked.end());
  linked.erase(std::unique(linked.begin(), linked.end()), linked.end());
  const auto at = [&](uint32_t v) { return int32_t(std::lower_bound(linked.begin(), linked.end(), v) - linked.begin()); };
  ConcurrentUnionFind joined(int32_t(linked.size()));
  for (const Link& l : links) joined.unite(at(l.a), at(l.b));
  joined.flatten();
  FillVector<uint32_t> first(edges.size());  // written below, on all threads
  // The sets merged elsewhere leave merged_here whole: all their elements go, and a node is in
  // one set only.
  local.merged_here = touched;
#pragma omp parallel for schedule(static, 65536)
  for (std::ptrdiff_t i = 0; i < m; ++i) {
    const MergeEdge& e = edges[size_t(i)];
    const uint32_t f = local_first(e.plus);
    const int32_t k = at(f);
    first[size_t(i)] = size_t(k) < linked.size() && linked[size_t(k)] == f ? linked[size_t(joined.root(k))] : f;
    if (owner(first[size_t(i)]) != rank) local.merged_here.unmark(e.plus), local.merged_here.unmark(e.minus);
  }
  return first;
}

// Step 2: each merging element to the rank owning its set's first node; received in element order
// (ranks in rank order, each in its element order).
Delivered<RoutedEdge> route_edges(FillVector<MergeEdge> edges, FillVector<uint32_t> first, uint32_t base,
                                   const NodeOwners& owner, MPI_Comm comm) {
  // In parallel, order kept: thread t counts, then writes, the t-th contiguous range of edges,
  // after those of threads before it for each destination.
  const auto ranks = owner.first.size();
  const int threads = omp_get_max_threads();
  const auto m = std::ptrdiff_t(edges.size());
  std::vector<size_t> at(size_t(threads) * ranks, 0);  // [thread][rank]: a count, then where it writes
  std::vector<int> counts(ranks, 0);
  FillVector<RoutedEdge> send;  // every record written once, by the thread that routes it
#pragma omp parallel num_threads(threads)
  {
    const auto t = size_t(omp_get_thread_num());
    const auto from = std::ptrdiff_t(size_t(m) * t / size_t(threads)), to = std::ptrdiff_t(size_t(m) * (t + 1) / size_t(threads));
    // Counts and cursors in the thread's own memory: at's entries of several threads share cache
    // lines, which a write per edge would pass from core to core.
    std::vector<size_t> mine(ranks, 0);
    for (std::ptrdiff_t i = from; i < to; ++i) ++mine[size_t(owner(first[size_t(i)]))];
    std::copy(mine.begin(), mine.end(), &at[t * ranks]);
#pragma omp barrier
#pragma omp single
    {
      counts = send_places(at, ranks);
      send.resize(size_t(std::accumulate(counts.begin(), counts.end(), int64_t(0))));
    }
    std::copy_n(&at[t * ranks], ranks, mine.begin());
    for (std::ptrdiff_t i = from; i < to; ++i) {
      const MergeEdge& e = edges[size_t(i)];
      send[mine[size_t(owner(first[size_t(i)]))]++] = {base + uint32_t(i), e.plus, e.minus, uint32_t(e.is_short), e.forced};
    }
  }
  // Only the send buffer travels: the rest is freed before the exchange's receive buffer exists.
  FillVector<MergeEdge>().swap(edges);
  FillVector<uint32_t>().swap(first);
  return Delivered<RoutedEdge>(std::move(send), counts, comm);
}

// An element of step 2's with its ends as indices among the members (in increasing node order:
// the same unions, finds and so roundings as over all nodes).
MergeEdge member_edge(const RoutedEdge& e, const NodeSubset& members) {
  return {uint32_t(members.index(e.plus)), uint32_t(members.index(e.minus)), e.forced, e.is_short != 0};
}

// The error for the disagreeing loop closed by the merging element of index `bad` (all ranks'
// count): found again by the rank that merged its set (received[bad_here] of `received`, n
// elements over `members`), each member's label from the rank whose element it is.
[[noreturn]] void report_loop(const RankNetlist& nl, const FillVector<uint32_t>& my_merging, uint32_t my_base,
                              const ReceivedView<RoutedEdge>& received, size_t n, const NodeSubset& members,
                              size_t bad_here, uint64_t bad, MPI_Comm comm) {
  int root = bad_here < n && received[bad_here].index == bad ? nl.rank : nl.ranks;
  MPI_Allreduce(MPI_IN_PLACE, &root, 1, MPI_INT, MPI_MIN, comm);
  DisagreeingLoop loop;
  std::vector<uint32_t> index;  // the members' indices among all ranks' merging elements
  if (nl.rank == root) {
    std::vector<MergeEdge> edges;
    for (size_t i = 0; i <= bad_here; ++i) edges.push_back(member_edge(received[i], members));
    loop = find_disagreeing_loop(edges, members.size(), bad_here);
    for (size_t k : loop.members) index.push_back(received[k].index);
  }
  int count = int(index.size()), has_short = loop.has_short;
  double forced[2] = {loop.forced, loop.implied};
  MPI_Bcast(&count, 1, MPI_INT, root, comm);
  MPI_Bcast(&has_short, 1, MPI_INT, root, comm);
  MPI_Bcast(forced, 2, MPI_DOUBLE, root, comm);
  index.resize(size_t(count));
  MPI_Bcast(index.data(), count, MPI_UINT32_T, root, comm);
  loop.has_short = has_short != 0, loop.forced = forced[0], loop.implied = forced[1];
  std::vector<std::string> labels(index.size());
  for (size_t i = 0; i < labels.size(); ++i) {
    if (index[i] < my_base || index[i] - my_base >= my_merging.size()) continue;
    const uint32_t k = my_merging[index[i] - my_base];
    labels[i] = shown(nl.element_name(k)) + " (" + nl.where(nl.element(k).where()) + ")";
  }
  throw InputError(loop_message(loop, merge_known_strings(labels, comm)));
}

// Step 2, the merging: routed's sets merged in element order with reduce()'s union-find, then
// every member node's answer (step 3) at its owner.
Answers merge_sets(const RankNetlist& nl, const FillVector<uint32_t>& my_merging, uint32_t my_base,
                   Delivered<RoutedEdge> routed, LocalSets local, const NodeOwners& owner, MPI_Comm comm) {
  const auto n = std::ptrdiff_t(routed.size());
  const ReceivedView<RoutedEdge> received = routed.view(nl.rank);
  // The members: the nodes of this rank's sets that it merges (step 1 found them, and their local
  // sets), and those of the elements that other ranks sent. This rank's own elements (most of
  // those received) are not marked or joined again.
  const auto own_from = std::ptrdiff_t(std::accumulate(routed.received_counts.begin(), routed.received_counts.begin() + nl.rank, uint64_t(0)));
  const auto own_to = own_from + std::ptrdiff_t(routed.received_counts[size_t(nl.rank)]);
  const auto others = n - (own_to - own_from);
  const auto other = [&](std::ptrdiff_t k) -> const RoutedEdge& { return *received.data(uint64_t(k < own_from ? k : k + (own_to - own_from))); };
  NodeSubset members = std::move(local.merged_here);
#pragma omp parallel for schedule(static, 65536)
  for (std::ptrdiff_t k = 0; k < others; ++k) members.mark(other(k).plus), members.mark(other(k).minus);
  members.rank();
  const std::vector<uint32_t> node = members.members();
  const auto m = uint32_t(node.size());
  // In parallel, as reduce() merges: the sets found first (each root its smallest member, the
  // set's first node: the local sets, joined by the other ranks' elements), then each thread
  // merges, in element order, the sets whose first member falls in its share of the members, and
  // finds its sets' members in increasing order.
  FillVector<int32_t> parent(m);  // written below, on all threads
#pragma omp parallel for schedule(static, 65536)
  for (int64_t i = 0; i < int64_t(m); ++i) {
    const int64_t t = local.touched.index(node[size_t(i)]);
    parent[size_t(i)] = t < 0 ? int32_t(i) : int32_t(members.count_below(local.node[size_t(local.sets.root(int32_t(t)))]));
  }
  local = LocalSets{};
  ConcurrentUnionFind sets(std::move(parent));
#pragma omp parallel for schedule(static, 65536)
  for (std::ptrdiff_t k = 0; k < others; ++k) sets.unite(int32_t(members.index(other(k).plus)), int32_t(members.index(other(k).minus)));
  sets.flatten();
  const auto first = [&](uint32_t i) { return uint32_t(sets.root(int32_t(i))); };
  PotentialUnionFind uf(m);
  FillVector<uint32_t> size;  // per set, at its first member: counted by the thread owning the set
  assign_parallel(size, m, 0u);
  size_t bad_here = size_t(n);
  const int max_team = omp_get_max_threads();
  // [s * max_team + t]: of thread s's range (of received elements, then of members), in order,
  // what thread t merges (indices into received) and what it finds (members, t < s): as
  // reduce()'s merge_super_nodes, so no thread reads every element or every member.
  std::vector<std::vector<uint32_t>> to_merge(size_t(max_team) * size_t(max_team));
  std::vector<std::vector<uint32_t>> handed(size_t(max_team) * size_t(max_team));
#pragma omp parallel reduction(min : bad_here)
  {
    // Thread t owns the sets whose first member r has floor(r team / m) = t: r in
    // [first_owned(t), first_owned(t + 1)), first_owned(t) = ceil(m t / team).
    const int team = omp_get_num_threads(), me = omp_get_thread_num();
    const auto thread_of = [&](uint32_t i) { return size_t(uint64_t(first(i)) * uint64_t(team) / m); };
    const auto first_owned = [&](int t) { return uint32_t((uint64_t(m) * uint64_t(t) + uint64_t(team) - 1) / uint64_t(team)); };
#pragma omp for schedule(static)
    for (std::ptrdiff_t i = 0; i < n; ++i)
      to_merge[size_t(me) * size_t(max_team) + thread_of(uint32_t(members.index(received.data(uint64_t(i))->plus)))].push_back(uint32_t(i));
    std::vector<uint32_t> path;
    size_t my_bad = size_t(n);
    for (int s = 0; s < team && my_bad == size_t(n); ++s)
      for (uint32_t i : to_merge[size_t(s) * size_t(max_team) + size_t(me)]) {
        bool merged = false;
        double implied = 0;
        if (disagrees(member_edge(*received.data(i), members), uf, path, merged, implied)) {
          my_bad = i;  // this thread's sets are left as they are: the run ends with the error
          break;
        }
      }
    // Each set's members found (and counted) in increasing order: this thread's range of members
    // read once, those of a set begun in an earlier range handed to its owner, who finds them
    // after its own.
    const uint32_t mine_from = first_owned(me), mine_to = first_owned(me + 1);
    for (uint32_t v = mine_from; v < mine_to; ++v) {
      const uint32_t root = first(v);
      if (root < mine_from) {
        handed[size_t(me) * size_t(max_team) + thread_of(root)].push_back(v);
      } else if (my_bad == size_t(n)) {
        uf.find(v, path);
        ++size[root];
      }
    }
#pragma omp barrier
    if (my_bad == size_t(n))
      for (int s = me + 1; s < team; ++s)
        for (uint32_t v : handed[size_t(s) * size_t(max_team) + size_t(me)]) {
          uf.find(v, path);
          ++size[first(v)];
        }
    bad_here = std::min(bad_here, my_bad);
  }
  uint64_t bad = bad_here < size_t(n) ? received.data(bad_here)->index : UINT64_MAX;
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_UINT64_T, MPI_MIN, comm);
  if (bad != UINT64_MAX) report_loop(nl, my_merging, my_base, received, size_t(n), members, bad_here, bad, comm);
  routed = Delivered<RoutedEdge>{};

  // Ground's set (node 0 is member 0) is fixed and has no owner.
  const bool ground = m > 0 && node[0] == 0;
  const uint32_t skip = ground;
  FillVector<NodeAnswer> answers(m - skip);
#pragma omp parallel for schedule(static, 4096)
  for (int64_t k = skip; k < int64_t(m); ++k) {  // read-only: every path was flattened above
    const auto i = uint32_t(k), f = first(i);
    NodeAnswer& a = answers[i - skip];
    a.node = node[i];
    a.size = size[f];
    a.unused = 0;
    a.first = ground && f == 0 ? 0 : node[f];
    a.offset = uf.offset(i) - uf.offset(f);
  }
  const std::vector<int> counts = owner.counts(answers, [](const NodeAnswer& a) { return a.node; });
  return Answers(std::move(answers), counts, comm);
}

}  // namespace

SuperNodes::SuperNodes(const RankNetlist& nl, MPI_Comm comm, ElementScan* scanned)
    : range_first_(nl.first_node), range_count_(nl.owned()) {
  Stopwatch watch;  // -v: the steps' times (dist/step_log.hpp)
  // The first pass over the rank's elements (element_scan.hpp): its merging elements in element
  // order, whether any rank has a source, and (for step 4) the other ranks' nodes that its stamping
  // elements touch.
  FillVector<uint32_t> my_merging;
  FillVector<Element> merging_elements;  // the scan's copies of them (the elements may be on the device only)
  int has_source = 0;
  if (scanned) {
    if (scanned->foreign.size() != (uint64_t(nl.total_nodes) + 63) / 64 ||
        scanned->merging_elements.size() != scanned->merging.size())
      throw std::logic_error("SuperNodes: the scan does not cover the netlist's nodes and merging elements");
    foreign_ = NodeSubset(0, std::move(scanned->foreign));
    my_merging.swap(scanned->merging);
    merging_elements.swap(scanned->merging_elements);
    has_source = scanned->has_source;
  } else {
    if (nl.device_elements) throw std::logic_error("SuperNodes: the elements are on a device, and no scan of them was given");
    // By blocks of elements, dynamically scheduled: the elements touching other ranks' nodes (a
    // locked write for each node's first mark) sit together at the end of a rank's range, as may
    // its sources and shorts, and a static schedule left them to one thread. Each block lists its
    // merging elements apart; the lists are copied to their places in block order.
    foreign_ = NodeSubset(0, nl.total_nodes);
    constexpr std::ptrdiff_t kBlock = 65536;
    const auto elements = std::ptrdiff_t(nl.elements.size()), blocks = (elements + kBlock - 1) / kBlock;
    std::vector<std::vector<uint32_t>> block_merging(static_cast<size_t>(blocks));
#pragma omp parallel for schedule(dynamic, 1) reduction(max : has_source)
    for (std::ptrdiff_t b = 0; b < blocks; ++b) {
      NodeSubset::Marker foreign(foreign_);  // the other ranks' nodes come in runs (numbered in element order)
      for (std::ptrdiff_t k = b * kBlock; k < std::min(elements, (b + 1) * kBlock); ++k) {
        const Element& e = nl.elements[size_t(k)];
        if (e.kind == ElementKind::VoltageSource || e.kind == ElementKind::CurrentSource) has_source = 1;
        if (e.kind == ElementKind::VoltageSource || is_short(e, nullptr)) {
          block_merging[size_t(b)].push_back(uint32_t(k));
        } else if (stamps(e, nullptr)) {
          for (uint32_t v : {e.plus, e.minus})
            if (v != 0 && !in_range(v)) foreign.mark(v);
        }
      }
    }
    std::vector<size_t> start(size_t(blocks) + 1, 0);  // [b]: where block b's list goes
    for (size_t b = 0; b < block_merging.size(); ++b) start[b + 1] = start[b] + block_merging[b].size();
    my_merging.resize(start.back());  // written below, on all threads
#pragma omp parallel for schedule(dynamic, 1)
    for (std::ptrdiff_t b = 0; b < blocks; ++b) {
      const std::vector<uint32_t>& mine = block_merging[size_t(b)];
      std::copy(mine.begin(), mine.end(), my_merging.begin() + std::ptrdiff_t(start[size_t(b)]));
    }
  }
  FillVector<MergeEdge> my_edges(my_merging.size());
#pragma omp parallel for schedule(static, 4096)
  for (std::ptrdiff_t i = 0; i < std::ptrdiff_t(my_merging.size()); ++i)
    my_edges[size_t(i)] = merge_edge(scanned ? merging_elements[size_t(i)] : nl.elements[my_merging[size_t(i)]]);
  FillVector<Element>().swap(merging_elements);
  MPI_Allreduce(MPI_IN_PLACE, &has_source, 1, MPI_INT, MPI_LOR, comm);
  if (!has_source) throw InputError(no_sources_message(nl.files[0]));
  uint64_t count = my_edges.size(), base = 0, total = count;
  MPI_Exscan(&count, &base, 1, MPI_UINT64_T, MPI_SUM, comm);
  MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_UINT64_T, MPI_SUM, comm);
  if (nl.rank == 0) base = 0;
  if (total >= UINT32_MAX) throw InputError("the netlist has more than 2^32 voltage sources and shorts, beyond this build's index width");
  const NodeOwners owner{all_gather(std::vector<uint32_t>{nl.first_node}, comm)};

  const double filtered = watch.lap();
  LocalSets local;
  FillVector<uint32_t> first = set_firsts(my_edges, nl.total_nodes, owner, nl.rank, comm, links_, local);
  const double found = watch.lap();
  Delivered<RoutedEdge> routed = route_edges(std::move(my_edges), std::move(first), uint32_t(base), owner, comm);
  const double sent = watch.lap();
  const size_t merged_here = routed.size();
  Answers answered = merge_sets(nl, my_merging, uint32_t(base), std::move(routed), std::move(local), owner, comm);
  const ReceivedView<NodeAnswer> answers = answered.view(nl.rank);
  const double merged = watch.lap();

  // Step 3: this rank's nodes. Not first: a member of ground's set, or not its set's smallest.
  const auto a = std::ptrdiff_t(answered.size());
  const auto not_first = [](const NodeAnswer& x) { return x.first == 0 || x.first != x.node; };
  not_first_ = NodeSubset(range_first_, range_count_);
  has_offset_ = NodeSubset(range_first_, range_count_);
  has_size_ = NodeSubset(range_first_, range_count_);
  std::vector<uint64_t> remote;  // the answers whose first node is another rank's (any order)
#pragma omp parallel
  {
    std::vector<uint64_t> mine;
    {
      // Each rank's answers are sorted by node: a locked write per word, not per answer.
      NodeSubset::Marker not_first_at(not_first_), has_size_at(has_size_), has_offset_at(has_offset_);
#pragma omp for schedule(static, 4096) nowait
      for (std::ptrdiff_t i = 0; i < a; ++i) {
        const NodeAnswer& x = *answers.data(uint64_t(i));
        if (not_first(x)) not_first_at.mark(x.node);
        if (!not_first(x) && x.size > 1) has_size_at.mark(x.node);
        uint64_t bits = 0;
        std::memcpy(&bits, &x.offset, sizeof bits);
        if (bits != 0) has_offset_at.mark(x.node);  // -0.0 kept: the sums it enters stay bit for bit
        if (x.first != 0 && !in_range(x.first)) mine.push_back(uint64_t(i));
      }
    }
#pragma omp critical
    remote.insert(remote.end(), mine.begin(), mine.end());
  }
  not_first_.rank();
  has_offset_.rank();
  has_size_.rank();
  // Unknowns before rank q's first node: its node id less ground and the not-first nodes of lower ranks.
  const std::vector<uint32_t> not_firsts = all_gather(std::vector<uint32_t>{not_first_.size()}, comm);
  unknown_begin_.assign(not_firsts.size() + 1, 0);
  int64_t below = 1;  // ground
  for (size_t q = 0; q <= not_firsts.size(); ++q) {
    unknown_begin_[q] = int32_t(int64_t(q < not_firsts.size() ? owner.first[q] : nl.total_nodes) - below);
    if (q < not_firsts.size()) below += not_firsts[q];
  }
  first_unknown_ = unknown_begin_[size_t(nl.rank)];

  // Pages faulted in by all threads: a node each, or (at 50M nodes) millions of sets' sizes.
  size_for_overwrite(range_unknown_, range_count_);
  size_for_overwrite(range_offset_, has_offset_.size());
  size_for_overwrite(range_size_, has_size_.size());
#pragma omp parallel for schedule(static, 4096)
  for (std::ptrdiff_t k = 0; k < std::ptrdiff_t(range_count_); ++k)
    range_unknown_[size_t(k)] = unknowns_before(range_first_ + uint32_t(k));
  bool offset_of_unknown = false;  // an owned node of a super-node with an unknown has an offset
#pragma omp parallel for schedule(static, 4096) reduction(|| : offset_of_unknown)
  for (std::ptrdiff_t i = 0; i < a; ++i) {
    const NodeAnswer& x = *answers.data(uint64_t(i));
    if (has_offset_.contains(x.node)) {
      range_offset_[has_offset_.count_below(x.node)] = x.offset;
      offset_of_unknown = offset_of_unknown || x.first != 0;
    }
    if (has_size_.contains(x.node)) range_size_[has_size_.count_below(x.node)] = x.size;
    if (x.first == 0) range_unknown_[x.node - range_first_] = -1;
    else if (x.first != x.node && in_range(x.first)) range_unknown_[x.node - range_first_] = unknowns_before(x.first);
  }
  // Their first nodes, each asked once, ascending: a bitmap over all nodes, marked and read on all
  // threads (where a net spans ranks, millions of members: at 50M nodes on 4 ranks a sort and a
  // binary search per member on one thread took 2.2 s).
  const auto remotes = std::ptrdiff_t(remote.size());
  NodeSubset asked_set(0, nl.total_nodes);
#pragma omp parallel for schedule(static, 4096)
  for (std::ptrdiff_t k = 0; k < remotes; ++k) asked_set.mark(answers.data(remote[size_t(k)])->first);
  asked_set.rank();
  {
    const std::vector<uint32_t> asked = asked_set.members();
    const std::vector<int32_t> unknown = ask_owners(asked, owner.counts(asked, [](uint32_t v) { return v; }),
                                                    [&](uint32_t v) { return unknowns_before(v); }, comm);
#pragma omp parallel for schedule(static, 4096)
    for (std::ptrdiff_t k = 0; k < remotes; ++k) {
      const NodeAnswer& x = *answers.data(remote[size_t(k)]);
      range_unknown_[x.node - range_first_] = unknown[asked_set.count_below(x.first)];
    }
  }
  answered = Answers{};
  offsets_zero_ = !offset_of_unknown;
  const double numbered = watch.lap();
  fetch_foreign(owner.first, nl.total_nodes, comm);
  log_step(comm, fmt::format("super-nodes on rank {}: merging elements {:.3f} s ({} of its own), sets {:.3f} s, routed {:.3f} s, "
                             "merged {:.3f} s ({} elements, {} member nodes answered), numbered {:.3f} s, stamped nodes of "
                             "other ranks {:.3f} s ({})",
                             nl.rank, filtered, my_merging.size(), found, sent, merged, merged_here, size_t(a), numbered,
                             watch.lap(), foreign_.size()));
}

void SuperNodes::fetch_foreign(const std::vector<uint32_t>& first_nodes, uint32_t total_nodes, MPI_Comm comm) {
  // Step 4: the other ranks' nodes this rank's stamping elements touch (marked by the
  // constructor's first pass), asked of their owners as the words of foreign_'s bitmap over each
  // owner's range (a node is 1 bit there, not 4 bytes); each owner answers the nodes set there, in
  // increasing order, with their unknowns (4 bytes each), and the few nonzero offsets apart.
  foreign_.rank();
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const auto ranks = first_nodes.size();
  const auto range_end = [&](size_t q) { return q + 1 < ranks ? first_nodes[q + 1] : total_nodes; };
  std::vector<uint64_t> asks;
  std::vector<int> counts(ranks, 0), recv_counts;
  for (size_t q = 0; q < ranks; ++q) {
    if (int(q) == rank) continue;  // none of its own nodes is marked
    const std::vector<uint64_t> words = foreign_.words(first_nodes[q], range_end(q));
    asks.insert(asks.end(), words.begin(), words.end());
    counts[q] = record_count(words.size());
  }
  FillVector<uint64_t> asked;
  all_to_all(asks, counts, comm, recv_counts, asked);
  std::vector<uint64_t>().swap(asks);

  struct OffsetAt {  // a nonzero offset, at its node's place among those a rank asked
    uint32_t at, unused = 0;
    double offset;
  };
  FillVector<int32_t> unknowns;  // every entry written below, on all threads
  std::vector<OffsetAt> offsets;
  std::vector<int> unknown_counts(ranks, 0), offset_counts(ranks, 0);
  const uint32_t base = range_first_ - (range_first_ - foreign_.base()) % 64;  // where words() began
  size_t from = 0;
  for (size_t p = 0; p < ranks; from += size_t(recv_counts[p]), ++p) {
    NodeSubset nodes(base, std::vector<uint64_t>(asked.begin() + std::ptrdiff_t(from), asked.begin() + std::ptrdiff_t(from) + recv_counts[p]));
    nodes.rank();
    const std::vector<uint32_t> node = nodes.members();
    const size_t begin = unknowns.size(), offsets_before = offsets.size();
    unknowns.resize(begin + node.size());
#pragma omp parallel
    {
      std::vector<OffsetAt> mine;  // any order: each carries its place
#pragma omp for schedule(static, 4096) nowait
      for (std::ptrdiff_t i = 0; i < std::ptrdiff_t(node.size()); ++i) {
        const uint32_t v = node[size_t(i)];
        unknowns[begin + size_t(i)] = own_unknown(v);
        if (has_offset_.contains(v)) mine.push_back({uint32_t(i), 0, own_offset(v)});
      }
#pragma omp critical
      offsets.insert(offsets.end(), mine.begin(), mine.end());
    }
    unknown_counts[p] = record_count(node.size());
    offset_counts[p] = record_count(offsets.size() - offsets_before);
  }
  FillVector<uint64_t>().swap(asked);
  std::vector<int> back_counts;
  all_to_all(unknowns, unknown_counts, comm, back_counts, foreign_unknown_);
  FillVector<int32_t>().swap(unknowns);
  const std::vector<OffsetAt> offset = all_to_all(offsets, offset_counts, comm, back_counts);
  assign_parallel(foreign_offset_, foreign_unknown_.size(), 0.0);
  bool offset_of_unknown = false;
  size_t at = 0;
  for (size_t q = 0; q < ranks; ++q) {
    const uint32_t before = foreign_.count_below(first_nodes[q]);  // q's nodes' place among foreign_'s
    for (size_t k = at; k < at + size_t(back_counts[q]); ++k) {
      const size_t i = before + offset[k].at;
      foreign_offset_[i] = offset[k].offset;
      offset_of_unknown = offset_of_unknown || foreign_unknown_[i] >= 0;
    }
    at += size_t(back_counts[q]);
  }
  offsets_zero_ = offsets_zero_ && !offset_of_unknown;
}

int32_t SuperNodes::unknowns_before(uint32_t node) const {
  return first_unknown_ + int32_t(node - range_first_) - int32_t(not_first_.count_below(node));
}

void SuperNodes::unknown_node(uint32_t node) {
  throw std::logic_error("SuperNodes: node " + std::to_string(node) + " is neither this rank's nor one it stamps");
}

uint32_t SuperNodes::size_of(uint32_t node) const {
  const int64_t i = has_size_.index(node);
  return i >= 0 ? range_size_[size_t(i)] : 1;
}

uint32_t SuperNodes::first_node(int32_t u) const {
  // The smallest node f with unknowns_before(f + 1) > u (unknowns_before only grows, by one
  // past each first node).
  uint32_t lo = range_first_, hi = range_first_ + range_count_ - 1;
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (unknowns_before(mid + 1) > u) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

NodeLookup SuperNodes::lookup() const {
  NodeLookup t;
  t.range_first = range_first_, t.range_count = range_count_;
  t.range_unknown = range_unknown_.data();
  t.has_offset = has_offset_.arrays();
  t.range_offset = range_offset_.data(), t.range_offsets = range_offset_.size();
  t.foreign = foreign_.arrays();
  t.foreign_unknown = foreign_unknown_.data(), t.foreign_offset = foreign_offset_.data();
  t.foreign_count = foreign_unknown_.size();
  t.offsets_zero = offsets_zero_;
  return t;
}

uint64_t SuperNodes::bytes() const {
  return not_first_.bytes() + has_offset_.bytes() + has_size_.bytes() + foreign_.bytes() +
         (range_unknown_.capacity() + range_size_.capacity() + foreign_unknown_.capacity()) * 4 +
         (range_offset_.capacity() + foreign_offset_.capacity()) * 8;
}

}  // namespace pgsim::dist
