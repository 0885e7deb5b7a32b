#include "duplicate_names.hpp"

#include <omp.h>

#include <algorithm>
#include <memory>

namespace pgsim {
namespace {

constexpr uint32_t kNamesPerShard = 8192;  // a shard's table: 16k slots of 8 bytes, in a core's L2 cache
// Blocks of elements per thread for the two counting passes (at 7.2M nodes, 2048 shards on 16
// threads: 64 blocks' counts, 0.5 MB, summed on one thread in well under a millisecond).
constexpr uint32_t kBlocksPerThread = 4;

// An element in its shard: the low 32 bits of its name's hash (the shard is chosen by their top
// bits, a slot in the shard's table by their low bits) beside its index, so that a shard's pass
// reads its entries in one run of memory instead of fetching each element's hash from an array
// indexed by element, a cache miss per element.
// A shard's table holds the same pairs.
struct Entry {
  uint32_t tag;
  uint32_t element;  // UINT32_MAX: an empty table slot
};

}  // namespace

std::vector<DuplicateName> find_duplicate_names(const NameTable& names) {
  const uint32_t n = names.size();
  unsigned bits = 0;
  while (bits < 16 && (uint64_t(n) >> bits) > kNamesPerShard) ++bits;
  const size_t shards = size_t(1) << bits;
  const auto shard_of = [bits](uint32_t h) { return bits == 0 ? size_t(0) : size_t(h >> (32 - bits)); };
  // Elements by shard, in element order within each (a counting sort over contiguous blocks).
  // Each name is hashed once, by the counting pass, which keeps the hash (4 bytes an element, freed
  // before the tables are built) for the placing pass: hashing every name again there, and reading
  // its offsets and text again, was a third of this function's instructions (callgrind, 1M-node
  // grid). Blocks, several per thread and taken dynamically, rather than one range per thread:
  // with one range each, the threads waited for the slowest (the placing pass faults `order` in as
  // it scatters, unevenly), 3 of 16 busy at the pass's end in the H100 profile of a 7.2M-node grid.
  const int threads = std::max(1, std::min(omp_get_max_threads(), int(n / 65536) + 1));
  const uint32_t blocks = threads == 1 ? 1 : uint32_t(threads) * kBlocksPerThread;
  std::vector<uint32_t> start(size_t(blocks) * shards + 1, 0);  // [block * shards + shard], then offsets
  const auto range = [n, blocks](uint32_t b) { return uint32_t(uint64_t(n) * b / blocks); };
  std::unique_ptr<uint32_t[]> hashes(new uint32_t[n]);  // each written by the counting pass before it is read
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (uint32_t b = 0; b < blocks; ++b)
    for (uint32_t i = range(b); i < range(b + 1); ++i) {
      const auto h = static_cast<uint32_t>(NameTable::hash(names[i]));
      hashes[i] = h;
      ++start[size_t(b) * shards + shard_of(h) + 1];
    }
  // Offsets shard-major, so that each shard's elements are contiguous and in element order.
  std::unique_ptr<Entry[]> order(new Entry[n]);  // each written once below before it is read
  std::vector<uint32_t> at(size_t(blocks) * shards);
  uint32_t sum = 0;
  std::vector<uint32_t> shard_begin(shards + 1, 0);
  for (size_t s = 0; s < shards; ++s) {
    shard_begin[s] = sum;
    for (uint32_t b = 0; b < blocks; ++b) {
      at[size_t(b) * shards + s] = sum;
      sum += start[size_t(b) * shards + s + 1];
    }
  }
  shard_begin[shards] = sum;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (uint32_t b = 0; b < blocks; ++b)
    for (uint32_t i = range(b); i < range(b + 1); ++i) order[at[size_t(b) * shards + shard_of(hashes[i])]++] = {hashes[i], i};
  hashes.reset();
  // Each shard: an open-addressing table of the first element of each name.
  std::vector<std::vector<DuplicateName>> found(shards);
#pragma omp parallel num_threads(threads)
  {
    std::vector<Entry> table;
#pragma omp for schedule(dynamic, 1)
    for (size_t s = 0; s < shards; ++s) {
      const uint32_t count = shard_begin[s + 1] - shard_begin[s];
      size_t size = 16;
      while (size < 2 * size_t(count)) size *= 2;
      table.assign(size, Entry{0, UINT32_MAX});
      for (uint32_t k = shard_begin[s]; k < shard_begin[s + 1]; ++k) {
        const Entry e = order[k];
        for (size_t slot = e.tag & (size - 1);; slot = (slot + 1) & (size - 1)) {
          Entry& t = table[slot];
          if (t.element == UINT32_MAX) {
            t = e;
            break;
          }
          if (t.tag == e.tag && NameTable::same(names[t.element], names[e.element])) {
            found[s].push_back({e.element, t.element});
            break;
          }
        }
      }
    }
  }
  std::vector<DuplicateName> all;
  for (const auto& f : found) all.insert(all.end(), f.begin(), f.end());
  std::sort(all.begin(), all.end(), [](const DuplicateName& a, const DuplicateName& b) { return a.element < b.element; });
  return all;
}

}  // namespace pgsim
