#include "mna/parallel_select.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

namespace pgsim {
namespace {

constexpr int kDigitBits = 16;
constexpr size_t kDigits = size_t(1) << kDigitBits;
// Fewer values are selected from a copy on one thread: the counting passes' histograms (256 KB
// per thread and prefix) would cost more than they save.
constexpr size_t kParallelValues = size_t(1) << 17;

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

// Where one wanted rank stands: the key prefix its value has (the top `bits` bits) and its rank
// among the values of that prefix.
struct Target {
  uint64_t prefix = 0;
  size_t rank;
};

// The distinct prefixes of the targets, ascending.
std::vector<uint64_t> prefixes_of(const std::vector<Target>& targets) {
  std::vector<uint64_t> prefixes;
  for (const Target& t : targets) prefixes.push_back(t.prefix);
  std::sort(prefixes.begin(), prefixes.end());
  prefixes.erase(std::unique(prefixes.begin(), prefixes.end()), prefixes.end());
  return prefixes;
}

// The index of `prefix` in `prefixes`, or prefixes.size() when absent.
size_t find_prefix(const std::vector<uint64_t>& prefixes, uint64_t prefix) {
  const size_t g = size_t(std::lower_bound(prefixes.begin(), prefixes.end(), prefix) - prefixes.begin());
  return g < prefixes.size() && prefixes[g] == prefix ? g : prefixes.size();
}

// Counts the next 16 bits of the keys under each distinct target prefix of `bits` bits (all keys
// when bits == 0) and moves every target one digit down: its prefix gains the digit holding its
// rank. Returns whether some value is NaN (which has no rank).
bool refine(const double* values, size_t n, int bits, std::vector<Target>& targets) {
  const std::vector<uint64_t> prefixes = prefixes_of(targets);
  const size_t groups = prefixes.size();
  const int shift = 64 - bits - kDigitBits;
  const size_t cells = groups * kDigits;
  std::vector<uint64_t> count(cells);
  std::unique_ptr<uint32_t[]> hist;  // per thread: its counts (a thread counts fewer than 2^32 values)
  size_t team = 1;
  bool nan = false;
#pragma omp parallel reduction(|| : nan)
  {
#pragma omp single
    {
      team = size_t(omp_get_num_threads());
      hist.reset(new uint32_t[team * cells]);
    }
    uint32_t* mine = hist.get() + size_t(omp_get_thread_num()) * cells;
    std::fill(mine, mine + cells, 0u);
#pragma omp for schedule(static)
    for (size_t i = 0; i < n; ++i) {
      nan = nan || std::isnan(values[i]);
      const uint64_t key = key_of(values[i]);
      const size_t g = bits == 0 ? 0 : find_prefix(prefixes, key >> (64 - bits));
      if (g < groups) ++mine[g * kDigits + ((key >> shift) & (kDigits - 1))];
    }
    // The threads' counts summed on all threads, not one after the other.
#pragma omp for schedule(static)
    for (size_t k = 0; k < cells; ++k) {
      uint64_t c = 0;
      for (size_t t = 0; t < team; ++t) c += hist[t * cells + k];
      count[k] = c;
    }
  }
  for (Target& t : targets) {
    const size_t g = find_prefix(prefixes, t.prefix);
    size_t digit = 0;
    for (; t.rank >= count[g * kDigits + digit]; ++digit) t.rank -= count[g * kDigits + digit];
    t.prefix = (t.prefix << kDigitBits) | digit;
  }
  return nan;
}

[[noreturn]] void refuse_nan() { throw std::invalid_argument("select_ranks: a NaN among the values"); }

}  // namespace

std::vector<double> select_ranks(const double* values, size_t n, const std::vector<size_t>& ranks) {
  if (n / size_t(std::max(1, omp_get_max_threads())) >= (uint64_t(1) << 32))
    throw std::length_error("select_ranks: 2^32 or more values per thread");
  for (size_t r : ranks)
    if (r >= n) throw std::invalid_argument("select_ranks: rank " + std::to_string(r) + " of " + std::to_string(n) + " values");
  std::vector<double> out;
  if (n < kParallelValues) {
    std::vector<uint64_t> keys(n);
    for (size_t i = 0; i < n; ++i) {
      if (std::isnan(values[i])) refuse_nan();
      keys[i] = key_of(values[i]);
    }
    for (size_t r : ranks) {
      std::nth_element(keys.begin(), keys.begin() + std::ptrdiff_t(r), keys.end());
      out.push_back(value_of(keys[r]));
    }
    return out;
  }
  std::vector<Target> targets(ranks.size());
  for (size_t j = 0; j < ranks.size(); ++j) targets[j].rank = ranks[j];
  if (refine(values, n, 0, targets)) refuse_nan();
  refine(values, n, kDigitBits, targets);
  // The last keys: the values under each target's 32-bit prefix, gathered in one pass and
  // selected exactly.
  const std::vector<uint64_t> prefixes = prefixes_of(targets);
  std::vector<std::vector<uint64_t>> keys(prefixes.size());
#pragma omp parallel
  {
    std::vector<std::vector<uint64_t>> mine(prefixes.size());
#pragma omp for schedule(static) nowait
    for (size_t i = 0; i < n; ++i) {
      const uint64_t key = key_of(values[i]);
      const size_t g = find_prefix(prefixes, key >> 32);
      if (g < prefixes.size()) mine[g].push_back(key);
    }
#pragma omp critical(pgsim_parallel_select)
    for (size_t g = 0; g < prefixes.size(); ++g) keys[g].insert(keys[g].end(), mine[g].begin(), mine[g].end());
  }
  for (const Target& t : targets) {
    std::vector<uint64_t>& k = keys[find_prefix(prefixes, t.prefix)];
    std::nth_element(k.begin(), k.begin() + std::ptrdiff_t(t.rank), k.end());
    out.push_back(value_of(k[t.rank]));
  }
  return out;
}

}  // namespace pgsim
