#include "reduce.hpp"

#include <omp.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>

#include "mna/concurrent_union_find.hpp"
#include "mna/potential_union_find.hpp"
#include "mna/prefix_sum.hpp"
#include "mna/row_slots.hpp"
#include "mna/source_loop.hpp"
#include "mna/stopwatch.hpp"
#include "mna/touched_vector.hpp"
#include "parser/default_init.hpp"
#include "parser/input_error.hpp"
#include "parser/shown.hpp"

namespace pgsim {
namespace {

std::string element_label(const Netlist& nl, uint32_t k) {
  return shown(nl.element_name(k)) + " (" + nl.where(nl.elements[k].where()) + ")";
}

// Sorts a short range in place (rows of a grid hold a handful of entries), a long one with std::sort.
// The permutation depends only on the comparisons' outcomes, whatever T is.
template <class T, class Less>
void sort_range(T* first, T* last, Less less) {
  if (last - first > 32) {
    std::sort(first, last, less);
    return;
  }
  if (last - first < 2) return;  // also an empty range of a null array: first + 1 would be undefined
  for (T* i = first + 1; i < last; ++i)
    for (T* j = i; j > first && less(*j, j[-1]); --j) std::swap(*j, j[-1]);
}

// The error for the first disagreeing loop, closed by merging[bad].
[[noreturn]] void report_loop(const Netlist& nl, const FillVector<uint32_t>& merging, size_t bad) {
  std::vector<MergeEdge> edges;
  for (size_t i = 0; i <= bad; ++i) edges.push_back(merge_edge(nl.elements[merging[i]]));
  const DisagreeingLoop loop = find_disagreeing_loop(edges, nl.node_count(), bad);
  std::vector<std::string> labels;
  for (size_t k : loop.members) labels.push_back(element_label(nl, merging[k]));
  throw InputError(loop_message(loop, labels));
}

// 1. Voltage sources and shorts (is_short) merge nodes into super-nodes, in element order within
// each set (so offsets are rounded, and the first element that closes a disagreeing loop is
// found, as a serial pass over the elements would). In parallel: the sets are found first
// (ConcurrentUnionFind), and each thread then merges the sets whose smallest node falls in its
// range of nodes, with no other thread touching them. `sets` (over every node, fresh) is left
// flattened: sets.root(v) is the smallest node of v's super-node, 0 for the ground's.
PotentialUnionFind merge_super_nodes(const Netlist& nl, const MergingElements& found, ConcurrentUnionFind& sets) {
  const uint32_t n_nodes = nl.node_count();
  if (!found.has_source) throw InputError(no_sources_message(nl.files[0]));
  const FillVector<uint32_t>& merging = found.elements;
  const std::ptrdiff_t m = std::ptrdiff_t(merging.size());

  // Any order gives the same sets: dynamic, so that a slow thread leaves no tail.
#pragma omp parallel for schedule(dynamic, 4096)
  for (std::ptrdiff_t i = 0; i < m; ++i) {
    const Element& e = nl.elements[merging[size_t(i)]];
    sets.unite(int32_t(e.plus), int32_t(e.minus));
  }
  sets.flatten();  // a set's root is its smallest node

  PotentialUnionFind uf(n_nodes);
  const int max_team = omp_get_max_threads();
  // [s * max_team + t]: of thread s's range (of merging elements, then of nodes), in order, what
  // thread t merges (the elements, as indices into merging) and what it finds (the nodes, t < s).
  std::vector<std::vector<uint32_t>> to_merge(size_t(max_team) * size_t(max_team));
  std::vector<std::vector<uint32_t>> handed(size_t(max_team) * size_t(max_team));
  size_t first_bad = merging.size();
#pragma omp parallel reduction(min : first_bad)
  {
    // Thread t owns the sets whose smallest node r has floor(r team / n_nodes) = t (owner()): r in
    // [first_owned(t), first_owned(t + 1)), first_owned(t) = ceil(n_nodes t / team).
    const int team = omp_get_num_threads(), me = omp_get_thread_num();
    auto owner = [&](uint32_t v) { return size_t(uint64_t(sets.root(int32_t(v))) * uint64_t(team) / n_nodes); };
    auto first_owned = [&](int t) {
      return uint32_t((uint64_t(n_nodes) * uint64_t(t) + uint64_t(team) - 1) / uint64_t(team));
    };
    // Each element to its owner's list: ranges in thread order (static schedule), so an owner that
    // reads the lists of threads 0, 1, ... in turn merges its elements in element order, and no
    // thread reads the elements of the others.
#pragma omp for schedule(static)
    for (std::ptrdiff_t i = 0; i < m; ++i)
      to_merge[size_t(me) * size_t(max_team) + owner(nl.elements[merging[size_t(i)]].plus)].push_back(uint32_t(i));
    std::vector<uint32_t> path;
    size_t my_bad = merging.size();
    for (int s = 0; s < team && my_bad == merging.size(); ++s)
      for (uint32_t i : to_merge[size_t(s) * size_t(max_team) + size_t(me)]) {
        bool merged = false;
        double implied = 0;
        if (disagrees(merge_edge(nl.elements[merging[i]]), uf, path, merged, implied)) {
          my_bad = i;  // this thread's sets are left as they are: the run ends with the error
          break;
        }
      }
    // Every node's offset from its root, each set's nodes in increasing order (a set's nodes are
    // at or above its smallest one). Each thread reads the roots of its own range of nodes once:
    // the nodes of its own sets it finds at once, the others (of a set begun in an earlier range)
    // it hands to their owner, who finds them after its own, range by range. (Had each thread read
    // every node from its range up, thread 0 would read them all: a serial pass, the reduction's
    // longest once the rest ran on 16 cores.) Comparing roots with the range, not dividing (owner()),
    // keeps the division off all but the handed nodes.
    const uint32_t mine_from = first_owned(me), mine_to = first_owned(me + 1);
    for (uint32_t v = mine_from; v < mine_to; ++v) {
      const uint32_t root = uint32_t(sets.root(int32_t(v)));
      if (root < mine_from) {
        handed[size_t(me) * size_t(max_team) + owner(root)].push_back(v);
      } else if (my_bad == merging.size()) {
        uf.find(v, path);
      }
    }
#pragma omp barrier
    if (my_bad == merging.size())
      for (int s = me + 1; s < team; ++s)
        for (uint32_t v : handed[size_t(s) * size_t(max_team) + size_t(me)]) uf.find(v, path);
    first_bad = std::min(first_bad, my_bad);
  }
  if (first_bad < merging.size()) report_loop(nl, merging, first_bad);
  return uf;
}

// number_unknowns()'s blocks of nodes: enough of them to balance 16 threads on a grid of 10^5 nodes.
constexpr std::ptrdiff_t kNumberedBlock = 4096;

// 2. Numbers the unknowns: every super-node not holding ground, in the order of its first
// (smallest) node, sets.root() (merge_super_nodes()), which becomes node_of_unknown. Fills
// unknown_of_node and offset_of_node. Returns whether every node with an unknown has offset 0 (no
// voltage source between two nodes of one super-node but the ground's), as on grids whose vias are
// 0 V sources: then a conductance between two unknowns adds nothing to b (stamp()).
bool number_unknowns(const PotentialUnionFind& uf, const ConcurrentUnionFind& sets, ReducedSystem& sys) {
  const uint32_t n_nodes = static_cast<uint32_t>(sys.unknown_of_node.size());
  const std::ptrdiff_t sn = n_nodes;
  const double ground_offset = uf.offset(Netlist::ground);
  static_assert(Netlist::ground == 0, "the ground's super-node is the one whose smallest node is 0");
  auto first_of = [&](std::ptrdiff_t v) { return uint32_t(sets.root(int32_t(v))); };
  // Unknowns in node order, by blocks of kNumberedBlock nodes: each block counts its first nodes,
  // the counts summed give each block its first unknown, and each block then numbers its first
  // nodes in order and gives every other node its first node's unknown, read where that is a first
  // node of this block (numbered above it) or, once every block has numbered its own, of an earlier
  // block. (A running count over all nodes cost an array of them and three more passes.)
  const std::ptrdiff_t blocks = (sn + kNumberedBlock - 1) / kNumberedBlock;
  auto block = [sn](std::ptrdiff_t c, std::ptrdiff_t& lo, std::ptrdiff_t& hi) {
    lo = c * kNumberedBlock, hi = std::min(sn, lo + kNumberedBlock);
  };
  std::vector<int32_t> start(size_t(blocks) + 1, 0);  // [c + 1]: block c's first nodes, then offsets
  std::vector<char> later(size_t(blocks), 0);         // block c has nodes of an earlier block's first node
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t c = 0; c < blocks; ++c) {
    std::ptrdiff_t lo, hi;
    block(c, lo, hi);
    int32_t firsts = 0;
    for (std::ptrdiff_t v = std::max<std::ptrdiff_t>(lo, 1); v < hi; ++v) firsts += first_of(v) == uint32_t(v);
    start[size_t(c) + 1] = firsts;
  }
  prefix_sum(start);
  const int32_t n = start.back();
  size_for_overwrite(sys.node_of_unknown, size_t(n));  // an entry per first node, below
  // v(node) = x[unknown] + offset, x being the voltage of the unknown's first node. Dynamic: the
  // writes fault in the three fresh arrays' pages, unevenly across threads.
  bool offsets_zero = true;
  auto from_first_node = [&](std::ptrdiff_t v, uint32_t r) {
    sys.unknown_of_node[size_t(v)] = sys.unknown_of_node[r];
    sys.offset_of_node[size_t(v)] = uf.offset(uint32_t(v)) - uf.offset(r);
    return sys.offset_of_node[size_t(v)] == 0;
  };
#pragma omp parallel
  {
#pragma omp for schedule(dynamic, 1) reduction(&& : offsets_zero)
    for (std::ptrdiff_t c = 0; c < blocks; ++c) {
      std::ptrdiff_t lo, hi;
      block(c, lo, hi);
      int32_t next = start[size_t(c)];
      for (std::ptrdiff_t v = lo; v < hi; ++v) {
        const uint32_t r = first_of(v);
        if (r == Netlist::ground) {
          sys.unknown_of_node[size_t(v)] = -1;
          sys.offset_of_node[size_t(v)] = uf.offset(uint32_t(v)) - ground_offset;
        } else if (r == uint32_t(v)) {
          sys.node_of_unknown[size_t(next)] = uint32_t(v);
          sys.unknown_of_node[size_t(v)] = next++;
          sys.offset_of_node[size_t(v)] = uf.offset(uint32_t(v)) - uf.offset(r);
          offsets_zero = offsets_zero && sys.offset_of_node[size_t(v)] == 0;
        } else if (std::ptrdiff_t(r) >= lo) {
          offsets_zero = from_first_node(v, r) && offsets_zero;
        } else {
          later[size_t(c)] = 1;
        }
      }
    }
    // The nodes whose first node is in an earlier block.
#pragma omp for schedule(dynamic, 1) reduction(&& : offsets_zero)
    for (std::ptrdiff_t c = 0; c < blocks; ++c) {
      if (!later[size_t(c)]) continue;
      std::ptrdiff_t lo, hi;
      block(c, lo, hi);
      for (std::ptrdiff_t v = lo; v < hi; ++v) {
        const uint32_t r = first_of(v);
        if (r != Netlist::ground && std::ptrdiff_t(r) < lo) offsets_zero = from_first_node(v, r) && offsets_zero;
      }
    }
  }
  return offsets_zero;
}

// The elements that stamp each unknown's row (stamps()), grouped by row: a conductance to another
// unknown (an off-diagonal entry of G) in the row's slot of G's arrays, col[ptr[u] + u ..
// ptr[u + 1] + u), as its element number, the slot's last place left for the diagonal; current
// sources and conductances to fixed nodes in extra[extra_ptr[u] .. extra_ptr[u + 1]). A current
// source with both ends in one unknown is listed once. Meanwhile each conductance between two
// super-nodes unites their nodes in `sets` (merge_super_nodes()'s), which thus ends holding the
// circuit's resistively connected parts for check_floating().
struct RowEntries {
  FillVector<int32_t> ptr, extra_ptr;  // zeroed on all threads
  FillVector<uint32_t> extra;          // resized unwritten: the parallel scatter writes every entry
};

RowEntries entries_by_row(const Netlist& nl, const Companion* companion, ReducedSystem& sys, ConcurrentUnionFind& sets) {
  const int32_t n = static_cast<int32_t>(sys.node_of_unknown.size());
  const std::ptrdiff_t elements = std::ptrdiff_t(nl.elements.size());
  // Each end's unknown, or -1 for none (a fixed node, or the other end of one unknown).
  auto rows_of = [&](const Element& e, int32_t& ua, int32_t& ub) {
    ua = sys.unknown_of_node[e.plus], ub = sys.unknown_of_node[e.minus];
    if (ua == ub) {
      ub = -1;
      if (e.kind != ElementKind::CurrentSource) ua = -1;  // across a super-node: no current flows
    }
  };
  // Whether e's entries go to G's slots (a conductance between two unknowns) or to extra.
  auto in_g = [](const Element& e, int32_t ua, int32_t ub) {
    return e.kind != ElementKind::CurrentSource && ua >= 0 && ub >= 0;
  };
  RowEntries rows;
  // Counting sort by row: counts at ptr[u], summed to row ends, then filled from the end of each
  // row down (atomically: elements in any order), so ptr[u] ends at row u's start.
  assign_parallel(rows.ptr, size_t(n) + 1, 0);
  assign_parallel(rows.extra_ptr, size_t(n) + 1, 0);
  int64_t total = 0, extras = 0;
  // Both passes: any order gives the same counts, sets and (sorted by stamp()) rows, so dynamic
  // schedules, which a thread slowed by contended unions or atomics cannot hold up.
#pragma omp parallel for schedule(dynamic, 4096) reduction(+ : total, extras)
  for (std::ptrdiff_t k = 0; k < elements; ++k) {
    const Element& e = nl.elements[size_t(k)];
    if (!stamps(e, companion)) continue;
    int32_t ua, ub;
    rows_of(e, ua, ub);
    if (e.kind != ElementKind::CurrentSource && (ua >= 0 || ub >= 0)) sets.unite(int32_t(e.plus), int32_t(e.minus));
    const bool g = in_g(e, ua, ub);
    FillVector<int32_t>& count = g ? rows.ptr : rows.extra_ptr;
    (g ? total : extras) += (ua >= 0) + (ub >= 0);
    if (ua >= 0) __atomic_fetch_add(&count[size_t(ua)], 1, __ATOMIC_RELAXED);
    if (ub >= 0) __atomic_fetch_add(&count[size_t(ub)], 1, __ATOMIC_RELAXED);
  }
  if (total + n > INT32_MAX || extras > INT32_MAX)
    throw InputError(too_many_nonzeros_message());
  prefix_sum(rows.ptr);
  prefix_sum(rows.extra_ptr);
  rows.extra.resize(size_t(extras));
  CsrMatrix& G = sys.G;
  size_for_overwrite(G.col, size_t(total) + size_t(n));  // read only where the scatter or stamp() wrote
  size_for_overwrite(G.val, G.col.size());
#pragma omp parallel for schedule(dynamic, 4096)
  for (std::ptrdiff_t k = 0; k < elements; ++k) {
    const Element& e = nl.elements[size_t(k)];
    if (!stamps(e, companion)) continue;
    int32_t ua, ub;
    rows_of(e, ua, ub);
    if (in_g(e, ua, ub)) {
      G.col[size_t(__atomic_sub_fetch(&rows.ptr[size_t(ua)], 1, __ATOMIC_RELAXED) + ua)] = int32_t(k);
      G.col[size_t(__atomic_sub_fetch(&rows.ptr[size_t(ub)], 1, __ATOMIC_RELAXED) + ub)] = int32_t(k);
      continue;
    }
    if (ua >= 0) rows.extra[size_t(__atomic_sub_fetch(&rows.extra_ptr[size_t(ua)], 1, __ATOMIC_RELAXED))] = uint32_t(k);
    if (ub >= 0) rows.extra[size_t(__atomic_sub_fetch(&rows.extra_ptr[size_t(ub)], 1, __ATOMIC_RELAXED))] = uint32_t(k);
  }
  return rows;
}

// One element of the row being stamped, the unknown across it from the row (-1: a fixed node, or a
// current source) and its conductance (0 for a current source), looked up once per element rather
// than at every comparison of the sorts.
struct RowEntry {
  uint32_t element;
  int32_t neighbour;
  double g;
};

// 3. Stamps conductances (resistors; with a companion capacitors and inductors too) and current
// sources, row by row in parallel: each row sums its elements' contributions in element order (so
// G and b do not depend on the thread count), then CSR with sorted columns, parallel conductances
// summed, the diagonal in place. `rows`: entries_by_row()'s (its extra lists sorted here).
// offsets_zero: number_unknowns()'s; then a conductance between two unknowns adds g (o_self -
// o_other) = a zero to b, which leaves b as it is (b starts at +0, a sum is -0 only where both terms
// are, and adding a zero of either sign to anything else changes no bit): the term and its two
// offsets' look-ups are skipped.
//
// Each row is written once, as it is summed, over its own slot of G's arrays (entries_by_row()),
// which fits it exactly unless it has parallel conductances: only then are the rows moved to close
// the gaps. (Writing G in a second pass over the rows looked every element, its ends' unknowns and
// its conductance up again.)
void stamp(const Netlist& nl, const Companion* companion, ReducedSystem& sys, RowEntries& rows, bool offsets_zero) {
  const int32_t n = static_cast<int32_t>(sys.node_of_unknown.size());
  size_for_overwrite(sys.b, size_t(n));
  CsrMatrix& G = sys.G;
  G.rows = n;
  size_for_overwrite(G.ptr, size_t(n) + 1);  // row lengths, then their offsets
  G.ptr[0] = 0;
  auto slot = [&](int32_t u) { return size_t(rows.ptr[size_t(u)]) + size_t(u); };
  // The unknown across element k from row u; -1: a fixed node, or a current source.
  auto neighbour = [&](uint32_t k, int32_t u) -> int32_t {
    const Element& e = nl.elements[k];
    if (e.kind == ElementKind::CurrentSource) return -1;
    const int32_t ua = sys.unknown_of_node[e.plus];
    return ua == u ? sys.unknown_of_node[e.minus] : ua;
  };
#pragma omp parallel
  {
    std::vector<RowEntry> row;  // this thread's current row
#pragma omp for schedule(dynamic, 4096)
    for (int32_t u = 0; u < n; ++u) {
      // Both lists in element order, merged.
      int32_t* g_first = G.col.data() + slot(u);
      int32_t* g_last = G.col.data() + slot(u + 1) - 1;
      uint32_t* x_first = rows.extra.data() + rows.extra_ptr[size_t(u)];
      uint32_t* x_last = rows.extra.data() + rows.extra_ptr[size_t(u) + 1];
      sort_range(g_first, g_last, [](int32_t x, int32_t y) { return uint32_t(x) < uint32_t(y); });
      sort_range(x_first, x_last, std::less<uint32_t>());
      row.clear();
      while (g_first < g_last || x_first < x_last) {
        const uint32_t k = x_first == x_last || (g_first < g_last && uint32_t(*g_first) < *x_first) ? uint32_t(*g_first++)
                                                                                                   : *x_first++;
        row.push_back({k, neighbour(k, u), element_conductance(nl.elements[k], companion)});
      }
      double d = 0, b = 0;
      // Conductances first, then current sources, each in element order, as a serial pass over the
      // elements would sum them. Current leaving u through a conductance: g (v_u - v_other).
      for (const RowEntry& r : row) {
        const Element& e = nl.elements[r.element];
        if (e.kind == ElementKind::CurrentSource) continue;
        d += r.g;
        if (r.neighbour >= 0 && offsets_zero) continue;
        const bool plus = sys.unknown_of_node[e.plus] == u;
        const double o_self = sys.offset_of_node[plus ? e.plus : e.minus];
        const double o_other = sys.offset_of_node[plus ? e.minus : e.plus];
        if (r.neighbour >= 0) {
          b -= r.g * (o_self - o_other);
        } else {
          b += r.g * (o_other - o_self);
        }
      }
      // SPICE: a positive source drives current out of its plus node, through itself, into minus.
      for (const RowEntry& r : row) {
        const Element& e = nl.elements[r.element];
        if (e.kind != ElementKind::CurrentSource) continue;
        if (sys.unknown_of_node[e.plus] == u) b -= e.value;
        if (sys.unknown_of_node[e.minus] == u) b += e.value;
      }
      sys.b[size_t(u)] = b;
      // By neighbour (element order among equals, kept by the stable insertion sort): the
      // distinct neighbours and the diagonal make the row, parallel conductances summed in that
      // order. The slot's entries are all in `row` by now.
      sort_range(row.data(), row.data() + row.size(),
                 [](const RowEntry& x, const RowEntry& y) { return x.neighbour < y.neighbour; });
      int32_t* col = G.col.data() + slot(u);
      double* val = G.val.data() + slot(u);
      int32_t length = 0;
      bool diagonal_placed = false;
      for (const RowEntry& r : row) {
        if (r.neighbour < 0) continue;
        if (!diagonal_placed && r.neighbour > u) {
          col[length] = u, val[length++] = d;
          diagonal_placed = true;
        }
        if (length > 0 && col[length - 1] == r.neighbour) {
          val[length - 1] -= r.g;  // parallel to the previous conductance
        } else {
          col[length] = r.neighbour, val[length++] = -r.g;
        }
      }
      if (!diagonal_placed) col[length] = u, val[length++] = d;
      G.ptr[size_t(u) + 1] = length;
    }
  }
  close_row_gaps(G, slot);
}

// 4. Floating components: super-nodes with no resistive path to a fixed node, i.e. to the ground's
// super-node. In `sets` (after entries_by_row()) a part's root is its smallest node, 0 for the
// ground's part, so the first node of a floating part's first unknown (unknowns are numbered in
// the order of their first nodes) is that part's root: the error names the smallest node outside
// the ground's part, and its part's netlist node count.
void check_floating(const Netlist& nl, ConcurrentUnionFind& sets) {
  const int32_t n_nodes = static_cast<int32_t>(nl.node_count());
  int32_t floating = n_nodes;
  // Dynamic: a find's cost is its path's length (`sets` is not flattened here), uneven by range.
#pragma omp parallel for schedule(dynamic, 4096) reduction(min : floating)
  for (int32_t v = 0; v < n_nodes; ++v)
    if (v < floating && sets.find(v) != int32_t(Netlist::ground)) floating = v;
  if (floating == n_nodes) return;
  int64_t netlist_nodes = 0;
#pragma omp parallel for schedule(static, 4096) reduction(+ : netlist_nodes)
  for (int32_t v = floating; v < n_nodes; ++v) netlist_nodes += sets.find(v) == floating;
  throw InputError(floating_message(netlist_nodes, nl.node_names[uint32_t(floating)]));
}

}  // namespace

bool stamps(const Element& e, const Companion* companion) {
  return e.kind == ElementKind::CurrentSource || element_conductance(e, companion) > 0;
}

bool is_short(const Element& e, const Companion* companion) {
  return (e.kind == ElementKind::Resistor && e.value == 0.0) ||
         (e.kind == ElementKind::Inductor && (!companion || e.value == 0.0));
}

std::string no_sources_message(const std::string& top_file) {
  return top_file + ": the netlist has no voltage or current sources";
}

std::string too_many_nonzeros_message() {
  return "the system has more than 2^31 nonzeros, beyond this build's index width";
}

std::string floating_message(int64_t nodes, std::string_view node_name) {
  return "floating part of the circuit: " + std::to_string(nodes) + " node(s), among them " + shown(node_name) +
         ", have no resistive path to ground or to a voltage source";
}

// Each thread filters one contiguous range of elements (static schedule: ranges in thread order)
// and copies its list to its place, so no thread appends every list (at 7.2M nodes, 2.2M vias)
// alone.
MergingElements merging_elements(const Netlist& nl, const Companion* companion) {
  const std::ptrdiff_t elements = std::ptrdiff_t(nl.elements.size());
  std::vector<size_t> start(size_t(omp_get_max_threads()) + 1, 0);  // [t + 1]: thread t's count, then offsets
  MergingElements merging;
  bool any_source = false;
#pragma omp parallel reduction(|| : any_source)
  {
    const int me = omp_get_thread_num();
    std::vector<uint32_t> mine;
#pragma omp for schedule(static) nowait
    for (std::ptrdiff_t k = 0; k < elements; ++k) {
      const Element& e = nl.elements[size_t(k)];
      if (e.kind == ElementKind::VoltageSource || e.kind == ElementKind::CurrentSource) any_source = true;
      if (e.kind == ElementKind::VoltageSource || is_short(e, companion)) mine.push_back(uint32_t(k));
    }
    start[size_t(me) + 1] = mine.size();
#pragma omp barrier
#pragma omp single
    {
      for (size_t t = 1; t < start.size(); ++t) start[t] += start[t - 1];
      merging.elements.resize(start.back());
    }
    std::copy(mine.begin(), mine.end(), merging.elements.begin() + std::ptrdiff_t(start[size_t(me)]));
  }
  merging.has_source = any_source;
  return merging;
}

void keep_merging_names(Netlist& nl, const MergingElements& merging) { nl.keep_element_names(merging.elements); }

ReducedSystem reduce(const Netlist& nl, const Companion* companion) {
  return reduce(nl, companion, merging_elements(nl, companion));
}

ReducedSystem reduce(const Netlist& nl, const Companion* companion, const MergingElements& merging) {
  ReducedSystem sys;
  size_for_overwrite(sys.unknown_of_node, nl.node_count());  // every entry written by number_unknowns()
  size_for_overwrite(sys.offset_of_node, nl.node_count());
  ConcurrentUnionFind sets(static_cast<int32_t>(nl.node_count()));
  Stopwatch step;
  double merged = 0, numbered = 0, grouped = 0, stamped = 0;
  bool offsets_zero = false;
  {  // the super-nodes' potentials (12 B per netlist node) freed once read, before the rows are made
    const PotentialUnionFind super_nodes = merge_super_nodes(nl, merging, sets);
    merged = step.lap();
    offsets_zero = number_unknowns(super_nodes, sets, sys);
    numbered = step.lap();
  }
  {  // the rows' lists freed before the floating check
    RowEntries rows = entries_by_row(nl, companion, sys, sets);
    grouped = step.lap();
    stamp(nl, companion, sys, rows, offsets_zero);
    stamped = step.lap();
  }
  check_floating(nl, sets);
  spdlog::debug("reduce steps: super-nodes {:.3f} s, unknowns numbered {:.3f} s, elements grouped by row (and the "
                "resistive parts joined) {:.3f} s, rows stamped {:.3f} s, floating check {:.3f} s",
                merged, numbered, grouped, stamped, step.lap());
  return sys;
}

std::vector<double> node_voltages(const ReducedSystem& sys, const std::vector<double>& x) {
  std::vector<double> v;
  assign_touched(v, sys.unknown_of_node.size());
  const std::ptrdiff_t n = std::ptrdiff_t(v.size());
#pragma omp parallel for schedule(static, 4096)
  for (std::ptrdiff_t i = 0; i < n; ++i) {
    const int32_t u = sys.unknown_of_node[size_t(i)];
    v[size_t(i)] = sys.offset_of_node[size_t(i)] + (u >= 0 ? x[size_t(u)] : 0.0);
  }
  return v;
}

}  // namespace pgsim
