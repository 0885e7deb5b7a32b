#include "dist/super_nodes.hpp"

#include <algorithm>

#include "dist/record_exchange.hpp"
#include "mna/reduce.hpp"
#include "mna/source_loop.hpp"
#include "parser/input_error.hpp"
#include "parser/shown.hpp"

namespace pgsim::dist {
namespace {

// The error for the loop closed by edges[bad] (every rank calls it, with the same edges): the
// loop found again, each member's label from the rank whose element it is.
[[noreturn]] void report_loop(const RankNetlist& nl, const std::vector<uint32_t>& my_merging,
                              const std::vector<int>& counts, std::vector<MergeEdge> edges, uint32_t nodes, size_t bad,
                              MPI_Comm comm) {
  const DisagreeingLoop loop = find_disagreeing_loop(edges, nodes, bad);
  size_t my_first = 0;  // my first edge's index among all ranks' edges
  for (int q = 0; q < nl.rank; ++q) my_first += size_t(counts[size_t(q)]);
  std::vector<std::string> labels(loop.members.size());
  for (size_t i = 0; i < labels.size(); ++i) {
    const size_t k = loop.members[i];
    if (k < my_first || k - my_first >= my_merging.size()) continue;
    const Element& e = nl.elements[my_merging[k - my_first]];
    labels[i] = shown(nl.element_names[e.name]) + " (" + nl.where(e.where) + ")";
  }
  throw InputError(loop_message(loop, merge_known_strings(labels, comm)));
}

}  // namespace

SuperNodes::SuperNodes(const RankNetlist& nl, MPI_Comm comm) : total_nodes_(nl.total_nodes) {
  // This rank's merging elements in element order, and whether any rank has a source.
  std::vector<uint32_t> my_merging;
  std::vector<MergeEdge> my_edges;
  int has_source = 0;
  for (size_t k = 0; k < nl.elements.size(); ++k) {
    const Element& e = nl.elements[k];
    if (e.kind == ElementKind::VoltageSource || e.kind == ElementKind::CurrentSource) has_source = 1;
    if (e.kind == ElementKind::VoltageSource || is_short(e, nullptr)) {
      my_merging.push_back(uint32_t(k));
      my_edges.push_back(merge_edge(e));
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, &has_source, 1, MPI_INT, MPI_LOR, comm);
  if (!has_source) throw InputError(no_sources_message(nl.files[0]));
  std::vector<int> counts;
  std::vector<MergeEdge> edges = all_gather(my_edges, comm, &counts);
  std::vector<MergeEdge>().swap(my_edges);

  // The union-find over the members, renumbered in increasing node order: the same unions, finds
  // and so roundings as reduce()'s over all nodes.
  // The members as a bitmap over all nodes (set in parallel), ranked per 64-bit word: a member's
  // index is its rank, found in O(1) (no sort of the endpoints, no binary search per lookup).
  const size_t words = (size_t(total_nodes_) + 63) / 64;
  member_bits_.assign(words, 0);
  member_bits_[0] = 1;  // ground
  const auto mark = [this](uint32_t node) {
    __atomic_fetch_or(&member_bits_[node >> 6], uint64_t(1) << (node & 63), __ATOMIC_RELAXED);
  };
#pragma omp parallel for schedule(static, 65536)
  for (std::ptrdiff_t i = 0; i < std::ptrdiff_t(edges.size()); ++i) mark(edges[size_t(i)].plus), mark(edges[size_t(i)].minus);
  member_rank_.resize(words);
  uint32_t members = 0;
  for (size_t w = 0; w < words; ++w) {
    member_rank_[w] = members;
    members += uint32_t(__builtin_popcountll(member_bits_[w]));
  }
  member_.resize(members);  // held for the whole run, on every rank
#pragma omp parallel for schedule(static, 4096)
  for (std::ptrdiff_t w = 0; w < std::ptrdiff_t(words); ++w) {
    uint32_t at = member_rank_[size_t(w)];
    for (uint64_t bits = member_bits_[size_t(w)]; bits != 0; bits &= bits - 1)
      member_[at++] = uint32_t(w) * 64 + uint32_t(__builtin_ctzll(bits));
  }
  const auto m = uint32_t(member_.size());
#pragma omp parallel for schedule(static, 65536)
  for (std::ptrdiff_t i = 0; i < std::ptrdiff_t(edges.size()); ++i) {
    MergeEdge& e = edges[size_t(i)];
    e.plus = uint32_t(member_index(e.plus));
    e.minus = uint32_t(member_index(e.minus));
  }
  PotentialUnionFind uf(m);
  std::vector<uint32_t> path;
  for (size_t i = 0; i < edges.size(); ++i) {
    bool merged = false;
    double implied = 0;
    if (disagrees(edges[i], uf, path, merged, implied)) report_loop(nl, my_merging, counts, std::move(edges), m, i, comm);
  }
  std::vector<MergeEdge>().swap(edges);
  for (uint32_t i = 0; i < m; ++i) uf.find(i, path);

  // Per root: its first member and its size; ground's root is fixed.
  const uint32_t ground_root = uf.flat_root(0);
  std::vector<uint32_t> first(m, UINT32_MAX), size(m, 0);
  for (uint32_t i = 0; i < m; ++i) {
    const uint32_t r = uf.flat_root(i);
    first[r] = std::min(first[r], i);
    ++size[r];
  }
  for (uint32_t i = 0; i < m; ++i) {
    const uint32_t r = uf.flat_root(i);
    if (r == ground_root || first[r] != i) not_first_.push_back(member_[i]);
  }
  member_unknown_.resize(m);
  member_offset_.resize(m);
  member_size_.resize(m);
#pragma omp parallel for schedule(static, 4096)
  for (int64_t k = 0; k < int64_t(m); ++k) {  // read-only: every path was flattened above
    const auto i = uint32_t(k);
    const uint32_t r = uf.flat_root(i);
    member_size_[i] = size[r];
    if (r == ground_root) {
      member_unknown_[i] = -1;
      member_offset_[i] = uf.offset(i) - uf.offset(0);
    } else {
      member_unknown_[i] = unknowns_before(member_[first[r]]);
      member_offset_[i] = uf.offset(i) - uf.offset(first[r]);
    }
  }
  index_range(nl.first_node, nl.owned());
}

void SuperNodes::index_range(uint32_t first, uint32_t count) {
  range_first_ = first;
  range_unknown_.resize(count);
  constexpr uint32_t kChunk = 1u << 16;
  const auto chunks = std::ptrdiff_t((uint64_t(count) + kChunk - 1) / kChunk);
#pragma omp parallel for schedule(dynamic, 1)
  for (std::ptrdiff_t c = 0; c < chunks; ++c) {
    const uint32_t lo = first + uint32_t(c) * kChunk, hi = first + std::min(count, uint32_t(c + 1) * kChunk);
    // Both lists ascending: one walk over each for the chunk.
    auto m = std::lower_bound(member_.begin(), member_.end(), lo);
    auto nf = std::lower_bound(not_first_.begin(), not_first_.end(), lo);
    int32_t before = int32_t(lo - uint32_t(nf - not_first_.begin()));  // unknowns_before(lo)
    for (uint32_t node = lo; node < hi; ++node) {
      const size_t k = node - first;
      const bool member = m != member_.end() && *m == node;
      range_unknown_[k] = member ? member_unknown_[size_t(m - member_.begin())] : before;
      if (member) ++m;
      if (nf != not_first_.end() && *nf == node) ++nf;
      else ++before;
    }
  }
}

int64_t SuperNodes::member_index(uint32_t node) const {
  const uint64_t word = member_bits_[node >> 6], below = (uint64_t(1) << (node & 63)) - 1;
  if (!(word >> (node & 63) & 1)) return -1;
  return int64_t(member_rank_[node >> 6]) + __builtin_popcountll(word & below);
}

int32_t SuperNodes::unknowns_before(uint32_t node) const {
  return int32_t(node - uint32_t(std::lower_bound(not_first_.begin(), not_first_.end(), node) - not_first_.begin()));
}

int32_t SuperNodes::unknown_of(uint32_t node) const {
  if (in_range(node)) return range_unknown_[node - range_first_];
  const int64_t i = member_index(node);
  return i >= 0 ? member_unknown_[size_t(i)] : unknowns_before(node);
}

double SuperNodes::offset_of(uint32_t node) const {
  const int64_t i = member_index(node);
  return i >= 0 ? member_offset_[size_t(i)] : 0.0;
}

uint32_t SuperNodes::size_of(uint32_t node) const {
  const int64_t i = member_index(node);
  return i >= 0 ? member_size_[size_t(i)] : 1;
}

uint32_t SuperNodes::first_node(int32_t u) const {
  // The smallest node f with unknowns_before(f + 1) > u (unknowns_before only grows, by one
  // past each first node).
  uint32_t lo = 0, hi = total_nodes_ - 1;
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (unknowns_before(mid + 1) > u) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

uint64_t SuperNodes::bytes() const {
  return member_.capacity() * (sizeof(uint32_t) + sizeof(int32_t) + sizeof(double) + sizeof(uint32_t)) +
         (not_first_.capacity() + range_unknown_.capacity() + member_rank_.capacity()) *
             sizeof(uint32_t) +
         member_bits_.capacity() * sizeof(uint64_t);
}

}  // namespace pgsim::dist
