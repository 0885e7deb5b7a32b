#pragma once
// Fresh large arrays for parallel loops (chain elimination, the CMG hierarchy build).
//
// Much of a large level's build time went into page faults: a new std::vector of n zeros is
// mapped and zeroed page by page by the one thread that constructs it (measured on a 5M-node
// grid: ~30 ms per 80 MB on one core, 10x the cost of writing the memory once mapped). Touching
// the new storage from every OpenMP thread first spreads those faults over the cores; the
// vector's own zero fill then writes memory that is already mapped.
#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <type_traits>
#include <vector>

namespace pgsim {

// Below this many bytes one thread faults the pages faster than a parallel region starts.
constexpr size_t kTouchedBytes = size_t(1) << 20;

// v becomes n copies of `value`, in storage first touched by all threads.
template <class T>
void assign_touched(std::vector<T>& v, size_t n, T value = T()) {
  static_assert(std::is_trivially_copyable_v<T>, "raw storage is touched with memset");
  const size_t bytes = n * sizeof(T);
  if (bytes < kTouchedBytes || omp_get_max_threads() == 1) {
    v.assign(n, value);
    return;
  }
  std::vector<T>().swap(v);
  v.reserve(n);
  // The reserved storage holds no objects yet: memset writes its bytes (page by page, one
  // thread per range) only to fault it in.
  unsigned char* raw = reinterpret_cast<unsigned char*>(v.data());
  const std::ptrdiff_t pages = std::ptrdiff_t((bytes + 4095) / 4096);
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t p = 0; p < pages; ++p) {
    const size_t begin = size_t(p) * 4096;
    std::memset(raw + begin, 0, std::min<size_t>(4096, bytes - begin));
  }
  v.assign(n, value);
}

}  // namespace pgsim
