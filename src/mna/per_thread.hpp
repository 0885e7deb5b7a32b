#pragma once
// A slot per thread, each on cache lines of its own. Threads that write their own entries of a
// plain std::vector<T> (a counter, or the header of a vector each one grows) write to cache lines
// they share with their neighbours' entries, and every such write takes the line from the core
// that wrote it last ("false sharing"): with 16 threads each growing its vector step by step, the
// lines' traffic can cost more than the work. OwnLine<T> starts each slot on a line and fills it.
#include <cstddef>
#include <vector>

namespace pgsim {

inline constexpr std::size_t kCacheLineBytes = 64;

template <class T>
struct alignas(kCacheLineBytes) OwnLine {
  T value;
};

// PerThread<T> slots(threads); slots[t].value is thread t's.
template <class T>
using PerThread = std::vector<OwnLine<T>>;

}  // namespace pgsim
