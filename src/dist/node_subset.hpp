#pragma once
// A subset of the node ids [base, base + count), as a bitmap ranked per 64-bit word: many
// threads may mark members at once, and once ranked a member's index among the members (in
// increasing node order) is found in O(1), with no sort of the nodes and no binary search.
// 1.5 bits per node of the range (the bitmap, and 4 bytes of rank per 64 nodes).
#include <cstdint>
#include <utility>
#include <vector>

#include "dist/node_lookup.hpp"

namespace pgsim::dist {

class NodeSubset {
 public:
  NodeSubset() = default;
  NodeSubset(uint32_t base, uint32_t count) : base_(base), bits_((uint64_t(count) + 63) / 64, 0) {}
  // The subset whose bitmap is `words` (as words() gives them), from node `base` on; unranked.
  NodeSubset(uint32_t base, std::vector<uint64_t> words) : base_(base), bits_(std::move(words)) {}

  // Thread-safe; node in the range. A member already marked costs a load, not a locked write (a
  // node is marked once for every element end that touches it).
  void mark(uint32_t node) {
    const uint32_t k = node - base_;
    uint64_t& word = bits_[k >> 6];
    const uint64_t bit = uint64_t(1) << (k & 63);
    if (!(__atomic_load_n(&word, __ATOMIC_RELAXED) & bit)) __atomic_fetch_or(&word, bit, __ATOMIC_RELAXED);
  }
  // Marks from one thread that meets its members in runs (a rank's answers, sorted by node; the
  // ends of vias in a row; the other ranks' nodes at the end of a rank's elements, 6.4M of them
  // at 50M nodes, P = 2): the bits of one word gathered, then set with one locked write where
  // mark() costs one per member. A word's bits are set when the next member falls in another
  // word, and at the marker's end.
  class Marker {
   public:
    explicit Marker(NodeSubset& subset) : subset_(subset) {}
    Marker(const Marker&) = delete;
    Marker& operator=(const Marker&) = delete;
    ~Marker() { flush(); }
    void mark(uint32_t node) {
      const uint32_t k = node - subset_.base_;
      if ((k >> 6) != word_) flush(), word_ = k >> 6;
      bits_ |= uint64_t(1) << (k & 63);
    }

   private:
    void flush() {
      if (bits_ != 0) __atomic_fetch_or(&subset_.bits_[word_], bits_, __ATOMIC_RELAXED);
      bits_ = 0;
    }
    NodeSubset& subset_;
    uint32_t word_ = 0;
    uint64_t bits_ = 0;
  };

  // Thread-safe, like mark().
  void unmark(uint32_t node) {
    const uint32_t k = node - base_;
    __atomic_fetch_and(&bits_[k >> 6], ~(uint64_t(1) << (k & 63)), __ATOMIC_RELAXED);
  }
  // After the last mark, before count_below(), index() and members().
  void rank() {
    rank_.resize(bits_.size() + 1);
    uint32_t members = 0;
    for (size_t w = 0; w < bits_.size(); ++w) {
      rank_[w] = members;
      members += uint32_t(__builtin_popcountll(bits_[w]));
    }
    rank_.back() = members;
  }
  uint32_t size() const { return rank_.back(); }
  uint32_t base() const { return base_; }
  bool contains(uint32_t node) const {
    const uint32_t k = node - base_;
    return bits_[k >> 6] >> (k & 63) & 1;
  }
  // The members below node (node in the range, or the end of the range).
  uint32_t count_below(uint32_t node) const {
    const uint32_t k = node - base_;
    if ((k >> 6) == bits_.size()) return size();
    return rank_[k >> 6] + uint32_t(__builtin_popcountll(bits_[k >> 6] & ((uint64_t(1) << (k & 63)) - 1)));
  }
  // node's index among the members, -1 when node (in the range) is none.
  int64_t index(uint32_t node) const { return contains(node) ? int64_t(count_below(node)) : -1; }

  // The members, ascending (filled in parallel).
  std::vector<uint32_t> members() const {
    std::vector<uint32_t> out(size());
#pragma omp parallel for schedule(static, 4096)
    for (std::ptrdiff_t w = 0; w < std::ptrdiff_t(bits_.size()); ++w) {
      uint32_t at = rank_[size_t(w)];
      for (uint64_t b = bits_[size_t(w)]; b != 0; b &= b - 1) out[at++] = base_ + uint32_t(w) * 64 + uint32_t(__builtin_ctzll(b));
    }
    return out;
  }
  // The bitmap's words over the nodes [from, to) (in the range), those of other nodes cleared: a
  // subset of them from node from - (from - base) % 64 on, for another rank (8 bytes per 64 nodes
  // where a list of members costs 4 bytes each).
  std::vector<uint64_t> words(uint32_t from, uint32_t to) const {
    if (from >= to) return {};
    const uint32_t lo = from - base_, hi = to - base_;
    std::vector<uint64_t> out(bits_.begin() + (lo >> 6), bits_.begin() + ((uint64_t(hi) + 63) >> 6));
    out.front() &= ~uint64_t(0) << (lo & 63);
    if (hi & 63) out.back() &= (uint64_t(1) << (hi & 63)) - 1;
    return out;
  }
  uint64_t bytes() const { return bits_.capacity() * sizeof(uint64_t) + rank_.capacity() * sizeof(uint32_t); }
  // Its arrays, ranked (node_lookup.hpp), valid while it lives unchanged.
  SubsetArrays arrays() const { return {base_, bits_.data(), rank_.data(), bits_.size()}; }

 private:
  uint32_t base_ = 0;
  std::vector<uint64_t> bits_;
  std::vector<uint32_t> rank_;  // per word: the members below it; then the count
};

}  // namespace pgsim::dist
