#include "cmg/counting_sort.hpp"

#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "mna/prefix_sum.hpp"
#include "mna/touched_vector.hpp"

namespace pgsim {
namespace {

// Items per chunk at least (fewer: one chunk), and chunks at most: each chunk holds a count per
// key of its range, so their number bounds the scratch memory (at most keys x chunks counters).
constexpr size_t kItemsPerChunk = size_t(1) << 16;
constexpr size_t kMaxChunks = 16;

}  // namespace

template <class Key, class Out>
void counting_sort(const Key& key, int32_t keys, Out& key_ptr, Out& rank) {
  const size_t n = key.size(), nk = static_cast<size_t>(keys);
  const size_t chunks = std::max<size_t>(1, std::min({kMaxChunks, n / kItemsPerChunk, size_t(omp_get_max_threads())}));
  // Every key_ptr[k + 1] and rank[i] is written below.
  size_for_overwrite(key_ptr, nk + 1);
  key_ptr[0] = 0;
  size_for_overwrite(rank, n);
  auto chunk_begin = [n, chunks](size_t c) { return n * c / chunks; };
  const std::ptrdiff_t schunks = std::ptrdiff_t(chunks), skeys = std::ptrdiff_t(nk);
  // Chunk c counts only the keys [lo[c], lo[c] + span) that its items hold: the CMG's keys (a
  // vertex's cluster, numbered by first vertex) follow the items' order closely, so the spans add
  // up to about `keys`, where a count of every key per chunk (16 x keys on 16 threads: 320 MB on
  // a 50M-node grid's level 0) was zeroed, read and written again in every pass.
  std::vector<int32_t> lo(chunks), hi(chunks);
#pragma omp parallel for schedule(static, 1)
  for (std::ptrdiff_t c = 0; c < schunks; ++c) {
    int32_t low = keys, high = -1;
    for (size_t i = chunk_begin(size_t(c)); i < chunk_begin(size_t(c) + 1); ++i) {
      low = std::min<int32_t>(low, key[i]);
      high = std::max<int32_t>(high, key[i]);
    }
    lo[size_t(c)] = low;
    hi[size_t(c)] = high;  // an empty chunk: hi < lo, no counts
  }
  // count[base[c] + k - lo[c]]: items of key k in chunk c, then where chunk c's first such item goes.
  std::vector<size_t> base(chunks + 1, 0);
  for (size_t c = 0; c < chunks; ++c) base[c + 1] = base[c] + size_t(std::max(0, hi[c] - lo[c] + 1));
  FillVector<int32_t> count;
  assign_parallel(count, base[chunks]);

#pragma omp parallel for schedule(static, 1)
  for (std::ptrdiff_t c = 0; c < schunks; ++c) {
    int32_t* cc = count.data() + base[size_t(c)];
    const int32_t low = lo[size_t(c)];
    for (size_t i = chunk_begin(size_t(c)); i < chunk_begin(size_t(c) + 1); ++i) ++cc[key[i] - low];
  }
  auto in_chunk = [&lo, &hi](size_t c, std::ptrdiff_t k) { return lo[c] <= k && k <= hi[c]; };
  auto at = [&base, &lo](size_t c, std::ptrdiff_t k) { return base[c] + size_t(k - lo[c]); };
#pragma omp parallel for schedule(static, 4096)
  for (std::ptrdiff_t k = 0; k < skeys; ++k) {
    int32_t total = 0;
    for (size_t c = 0; c < chunks; ++c)
      if (in_chunk(c, k)) total += count[at(c, k)];
    key_ptr[size_t(k) + 1] = total;
  }
  prefix_sum(key_ptr);
#pragma omp parallel for schedule(static, 4096)
  for (std::ptrdiff_t k = 0; k < skeys; ++k) {
    int32_t next = key_ptr[size_t(k)];
    for (size_t c = 0; c < chunks; ++c)
      if (in_chunk(c, k)) {
        const int32_t here = count[at(c, k)];
        count[at(c, k)] = next;
        next += here;
      }
  }
#pragma omp parallel for schedule(static, 1)
  for (std::ptrdiff_t c = 0; c < schunks; ++c) {
    int32_t* next = count.data() + base[size_t(c)];
    const int32_t low = lo[size_t(c)];
    for (size_t i = chunk_begin(size_t(c)); i < chunk_begin(size_t(c) + 1); ++i) rank[i] = next[key[i] - low]++;
  }
}

template void counting_sort(const FillVector<int32_t>&, int32_t, FillVector<int32_t>&, FillVector<int32_t>&);
template void counting_sort(const FillVector<int32_t>&, int32_t, std::vector<int32_t>&, std::vector<int32_t>&);

}  // namespace pgsim
