#include "mna/parallel_select.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include "parser/default_init.hpp"

namespace pgsim {
namespace {

// The first pass counts the keys' top 16 bits (the sign, the exponent and 4 bits of mantissa:
// sixteenths of an octave); the second the next 12 under the targets' prefixes, whose histograms
// (one per segment and target prefix) a narrower digit keeps small to clear and sum; the keys
// under a target's 28-bit prefix (2^-16 of an octave) are gathered.
constexpr int kFirstDigitBits = 16, kSecondDigitBits = 12;
constexpr int kGatherBits = kFirstDigitBits + kSecondDigitBits;
// Fewer values are selected from copies on one thread: the counting passes' histograms (256 KB
// per thread and segment) would cost more than they save.
constexpr size_t kParallelValues = size_t(1) << 17;
// The threads' histograms are summed in blocks of this many digits (or whole histograms, if
// smaller), so that a few histograms still keep every thread busy; a target finds its digit
// from the blocks' totals first.
constexpr size_t kSumBlock = 4096;

// An unsigned key in the values' order: a non-negative double's bits with the sign bit set, a
// negative one's bits inverted. -0.0 is keyed as 0.0.
uint64_t key_of(double v) {
  if (v == 0) v = 0;
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits >> 63 ? ~bits : bits | (uint64_t(1) << 63);
}

double value_of(uint64_t key) {
  const uint64_t bits = key >> 63 ? key & ~(uint64_t(1) << 63) : ~key;
  double v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

// The top `bits` bits of a key (none when bits == 0: a shift by 64 is undefined).
uint64_t prefix_of(uint64_t key, int bits) { return bits == 0 ? 0 : key >> (64 - bits); }

// Where one wanted rank (queries[query].ranks[index]) stands: the key prefix its value has (the
// top `bits` bits, as far as the passes have got) and its rank among its query's values of that prefix.
struct Target {
  size_t query, index;
  uint64_t prefix = 0;
  size_t rank;
};

// What a pass looks at: per segment, the distinct prefixes of the targets whose queries cover it,
// ascending; the pass keeps one histogram (or list) of the segment's keys under each, numbered
// segment by segment: segment s's j-th prefix is number first[s] + j.
struct Buckets {
  std::vector<std::vector<uint64_t>> prefixes;
  std::vector<size_t> first;

  Buckets(const std::vector<Target>& targets, const std::vector<RankQuery>& queries, size_t segments)
      : prefixes(segments), first(segments + 1, 0) {
    for (const Target& t : targets)
      for (size_t s = queries[t.query].first; s < queries[t.query].end; ++s) prefixes[s].push_back(t.prefix);
    for (size_t s = 0; s < segments; ++s) {
      std::sort(prefixes[s].begin(), prefixes[s].end());
      prefixes[s].erase(std::unique(prefixes[s].begin(), prefixes[s].end()), prefixes[s].end());
      first[s + 1] = first[s] + prefixes[s].size();
    }
  }
  // The number of segment s's bucket for `prefix` (one of its targets' prefixes).
  size_t of(size_t s, uint64_t prefix) const { return first[s] + slot(prefixes[s], prefix); }
  // The index of `prefix` among a segment's prefixes, or their count when absent. A linear scan:
  // a segment has a few (the ranks of the one or two queries over it), and this runs per value.
  static size_t slot(const std::vector<uint64_t>& prefixes, uint64_t prefix) {
    size_t j = 0;
    while (j < prefixes.size() && prefixes[j] != prefix) ++j;
    return j;
  }
};

// One thread's share of a pass: positions [begin, end) of the array, which meet segments
// [first_segment, end_segment) and so buckets [first_bucket, end_bucket).
struct Share {
  size_t begin = 0, end = 0, first_segment = 0, end_segment = 0, first_bucket = 0, end_bucket = 0;
  bool has(size_t bucket) const { return first_bucket <= bucket && bucket < end_bucket; }
};

Share share_of(size_t thread, size_t team, const std::vector<size_t>& bounds, const Buckets& buckets) {
  Share s;
  const size_t n = bounds.back();
  s.begin = n / team * thread + std::min(thread, n % team);
  s.end = s.begin + n / team + (thread < n % team ? 1 : 0);
  if (s.begin == s.end) return s;
  s.first_segment = size_t(std::upper_bound(bounds.begin(), bounds.end(), s.begin) - bounds.begin()) - 1;
  s.end_segment = size_t(std::upper_bound(bounds.begin(), bounds.end(), s.end - 1) - bounds.begin());
  s.first_bucket = buckets.first[s.first_segment];
  s.end_bucket = buckets.first[s.end_segment];
  return s;
}

// Counts the next `width` bits of the keys under each segment's target prefixes of `bits` bits
// (every key of the queried segments when bits == 0) and moves every target one digit down: its
// prefix gains the digit holding its rank, summed over its query's segments, and its rank becomes
// the rank inside that digit. Returns whether some value is NaN (which has no rank).
bool refine(const double* values, const std::vector<size_t>& bounds, const std::vector<RankQuery>& queries, int bits,
            int width, std::vector<Target>& targets) {
  const Buckets buckets(targets, queries, bounds.size() - 1);
  const size_t hists = buckets.first.back(), digits = size_t(1) << width;
  const size_t block = std::min(digits, kSumBlock), blocks = digits / block;  // per histogram
  const int shift = 64 - bits - width;
  FillVector<uint64_t> count(hists * digits);  // every cell written where the threads' counts are summed
  FillVector<uint64_t> block_count(hists * blocks);
  std::vector<Share> shares;
  std::vector<std::vector<uint32_t>> local;  // per thread: its share's histograms (it counts fewer than 2^32 values)
  bool nan = false;
#pragma omp parallel reduction(|| : nan)
  {
    const size_t team = size_t(omp_get_num_threads()), me = size_t(omp_get_thread_num());
#pragma omp single
    {
      shares.resize(team);
      local.resize(team);
    }
    const Share share = shares[me] = share_of(me, team, bounds, buckets);
    std::vector<uint32_t>& mine = local[me];
    mine.assign((share.end_bucket - share.first_bucket) * digits, 0);
    for (size_t s = share.first_segment; s < share.end_segment; ++s) {
      const std::vector<uint64_t>& prefixes = buckets.prefixes[s];
      if (prefixes.empty()) continue;  // no query covers the segment
      uint32_t* hist = mine.data() + (buckets.first[s] - share.first_bucket) * digits;
      const size_t end = std::min(share.end, bounds[s + 1]);
      for (size_t i = std::max(share.begin, bounds[s]); i < end; ++i) {
        nan = nan || std::isnan(values[i]);
        const uint64_t key = key_of(values[i]);
        const size_t j = Buckets::slot(prefixes, prefix_of(key, bits));
        if (j < prefixes.size()) ++hist[j * digits + ((key >> shift) & (digits - 1))];
      }
    }
#pragma omp barrier
    // The threads' counts summed on all threads, a block of one histogram at a time.
#pragma omp for schedule(static)
    for (size_t b = 0; b < hists * blocks; ++b) {
      const size_t h = b / blocks, at = b * block;
      uint64_t* out = count.data() + at;
      std::fill(out, out + block, 0);
      for (size_t t = 0; t < team; ++t)
        if (shares[t].has(h)) {
          const uint32_t* in = local[t].data() + (at - shares[t].first_bucket * digits);
          for (size_t d = 0; d < block; ++d) out[d] += in[d];
        }
      uint64_t total = 0;
      for (size_t d = 0; d < block; ++d) total += out[d];
      block_count[b] = total;
    }
  }
#pragma omp parallel for schedule(dynamic, 1)
  for (size_t k = 0; k < targets.size(); ++k) {
    Target& t = targets[k];
    const RankQuery& q = queries[t.query];
    std::vector<size_t> hist;  // the query's segments' histograms under the target's prefix
    for (size_t s = q.first; s < q.end; ++s) hist.push_back(buckets.of(s, t.prefix));
    // The block holding the target's rank, then its digit there.
    size_t b = 0, digit;
    for (;; ++b) {
      uint64_t c = 0;
      for (size_t h : hist) c += block_count[h * blocks + b];
      if (t.rank < c) break;
      t.rank -= c;
    }
    for (digit = b * block;; ++digit) {
      uint64_t c = 0;
      for (size_t h : hist) c += count[h * digits + digit];
      if (t.rank < c) break;
      t.rank -= c;
    }
    t.prefix = (t.prefix << width) | digit;
  }
  return nan;
}

// The last step: the keys under each target's kGatherBits prefix, gathered segment by segment in one
// pass, and each target's value selected exactly among its query's.
void gather_and_select(const double* values, const std::vector<size_t>& bounds, const std::vector<RankQuery>& queries,
                       const std::vector<Target>& targets, std::vector<std::vector<double>>& out) {
  const Buckets buckets(targets, queries, bounds.size() - 1);
  std::vector<Share> shares;
  std::vector<std::vector<std::vector<uint64_t>>> local;  // per thread: its share's buckets' keys
#pragma omp parallel
  {
    const size_t team = size_t(omp_get_num_threads()), me = size_t(omp_get_thread_num());
#pragma omp single
    {
      shares.resize(team);
      local.resize(team);
    }
    const Share share = shares[me] = share_of(me, team, bounds, buckets);
    std::vector<std::vector<uint64_t>>& mine = local[me];
    mine.resize(share.end_bucket - share.first_bucket);
    for (size_t s = share.first_segment; s < share.end_segment; ++s) {
      const std::vector<uint64_t>& prefixes = buckets.prefixes[s];
      if (prefixes.empty()) continue;
      std::vector<uint64_t>* keys = mine.data() + (buckets.first[s] - share.first_bucket);
      const size_t end = std::min(share.end, bounds[s + 1]);
      for (size_t i = std::max(share.begin, bounds[s]); i < end; ++i) {
        const uint64_t key = key_of(values[i]);
        const size_t j = Buckets::slot(prefixes, key >> (64 - kGatherBits));
        if (j < prefixes.size()) keys[j].push_back(key);
      }
    }
  }
#pragma omp parallel for schedule(dynamic, 1)
  for (size_t k = 0; k < targets.size(); ++k) {
    const Target& t = targets[k];
    const RankQuery& q = queries[t.query];
    std::vector<uint64_t> keys;
    for (size_t s = q.first; s < q.end; ++s) {
      const size_t b = buckets.of(s, t.prefix);
      for (size_t th = 0; th < shares.size(); ++th)
        if (shares[th].has(b)) {
          const std::vector<uint64_t>& part = local[th][b - shares[th].first_bucket];
          keys.insert(keys.end(), part.begin(), part.end());
        }
    }
    std::nth_element(keys.begin(), keys.begin() + std::ptrdiff_t(t.rank), keys.end());
    out[t.query][t.index] = value_of(keys[t.rank]);
  }
}

[[noreturn]] void refuse_nan() { throw std::invalid_argument("select_ranks: a NaN among the values"); }

void check(const std::vector<size_t>& bounds, const std::vector<RankQuery>& queries) {
  if (bounds.size() < 2 || bounds.front() != 0 || !std::is_sorted(bounds.begin(), bounds.end()))
    throw std::invalid_argument("select_ranks: segment bounds must rise from 0");
  if (bounds.back() / size_t(std::max(1, omp_get_max_threads())) >= (uint64_t(1) << 32))
    throw std::length_error("select_ranks: 2^32 or more values per thread");
  for (const RankQuery& q : queries) {
    if (q.first > q.end || q.end >= bounds.size())
      throw std::invalid_argument("select_ranks: segments [" + std::to_string(q.first) + ", " + std::to_string(q.end) +
                                  ") of " + std::to_string(bounds.size() - 1));
    const size_t n = bounds[q.end] - bounds[q.first];
    for (size_t r : q.ranks)
      if (r >= n)
        throw std::invalid_argument("select_ranks: rank " + std::to_string(r) + " of " + std::to_string(n) + " values");
  }
}

}  // namespace

std::vector<std::vector<double>> select_ranks(const double* values, const std::vector<size_t>& bounds,
                                              const std::vector<RankQuery>& queries) {
  check(bounds, queries);
  std::vector<std::vector<double>> out(queries.size());
  if (bounds.back() < kParallelValues) {
    for (size_t q = 0; q < queries.size(); ++q) {
      std::vector<uint64_t> keys;
      for (size_t i = bounds[queries[q].first]; i < bounds[queries[q].end]; ++i) {
        if (std::isnan(values[i])) refuse_nan();
        keys.push_back(key_of(values[i]));
      }
      for (size_t r : queries[q].ranks) {
        std::nth_element(keys.begin(), keys.begin() + std::ptrdiff_t(r), keys.end());
        out[q].push_back(value_of(keys[r]));
      }
    }
    return out;
  }
  std::vector<Target> targets;
  for (size_t q = 0; q < queries.size(); ++q) {
    out[q].resize(queries[q].ranks.size());
    for (size_t j = 0; j < queries[q].ranks.size(); ++j) targets.push_back({q, j, 0, queries[q].ranks[j]});
  }
  if (refine(values, bounds, queries, 0, kFirstDigitBits, targets)) refuse_nan();
  refine(values, bounds, queries, kFirstDigitBits, kSecondDigitBits, targets);
  gather_and_select(values, bounds, queries, targets, out);
  return out;
}

std::vector<double> select_ranks(const double* values, size_t n, const std::vector<size_t>& ranks) {
  return select_ranks(values, {0, n}, {RankQuery{0, 1, ranks}}).front();
}

}  // namespace pgsim
