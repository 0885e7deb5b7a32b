#include "cmg/counting_sort.hpp"

#include <omp.h>

#include <algorithm>
#include <cstddef>

#include "mna/prefix_sum.hpp"
#include "mna/touched_vector.hpp"

namespace pgsim {
namespace {

// Items per chunk at least (fewer: one chunk), and chunks at most: each chunk holds a count per
// key, so their number bounds the scratch memory (keys x chunks counters).
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
  // count[c * nk + k]: items of key k in chunk c, then where chunk c's first such item goes.
  FillVector<int32_t> count;
  assign_parallel(count, chunks * nk);
  auto chunk_begin = [n, chunks](size_t c) { return n * c / chunks; };
  const std::ptrdiff_t schunks = std::ptrdiff_t(chunks), skeys = std::ptrdiff_t(nk);

#pragma omp parallel for schedule(static, 1)
  for (std::ptrdiff_t c = 0; c < schunks; ++c) {
    int32_t* cc = count.data() + size_t(c) * nk;
    for (size_t i = chunk_begin(size_t(c)); i < chunk_begin(size_t(c) + 1); ++i) ++cc[key[i]];
  }
#pragma omp parallel for schedule(static, 4096)
  for (std::ptrdiff_t k = 0; k < skeys; ++k) {
    int32_t total = 0;
    for (size_t c = 0; c < chunks; ++c) total += count[c * nk + size_t(k)];
    key_ptr[size_t(k) + 1] = total;
  }
  prefix_sum(key_ptr);
#pragma omp parallel for schedule(static, 4096)
  for (std::ptrdiff_t k = 0; k < skeys; ++k) {
    int32_t at = key_ptr[size_t(k)];
    for (size_t c = 0; c < chunks; ++c) {
      const int32_t here = count[c * nk + size_t(k)];
      count[c * nk + size_t(k)] = at;
      at += here;
    }
  }
#pragma omp parallel for schedule(static, 1)
  for (std::ptrdiff_t c = 0; c < schunks; ++c) {
    int32_t* next = count.data() + size_t(c) * nk;
    for (size_t i = chunk_begin(size_t(c)); i < chunk_begin(size_t(c) + 1); ++i) rank[i] = next[key[i]]++;
  }
}

template void counting_sort(const std::vector<int32_t>&, int32_t, FillVector<int32_t>&, FillVector<int32_t>&);
template void counting_sort(const FillVector<int32_t>&, int32_t, std::vector<int32_t>&, std::vector<int32_t>&);

}  // namespace pgsim
