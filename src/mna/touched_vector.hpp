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
#include <type_traits>
#include <vector>

#include "parser/default_init.hpp"

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
  // The reserved storage holds no objects yet: one byte written per page (one thread per range of
  // pages) only faults it in; the kernel zeroes each page as it maps it.
  unsigned char* raw = reinterpret_cast<unsigned char*>(v.data());
  const std::ptrdiff_t pages = std::ptrdiff_t((bytes + 4095) / 4096);
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t p = 0; p < pages; ++p) raw[size_t(p) * 4096] = 0;
  v.assign(n, value);
}

// For an array private to one computation: v becomes n copies of `value`, written once, by all
// threads (a FillVector's resize writes nothing, so no thread fills it alone first; its pages
// are faulted in by the threads that write them). Below kTouchedBytes, by this thread.
template <class T>
void assign_parallel(FillVector<T>& v, size_t n, T value = T()) {
  static_assert(std::is_trivially_copyable_v<T>, "elements written by plain stores");
  if (n * sizeof(T) < kTouchedBytes || omp_get_max_threads() == 1) {
    v.assign(n, value);
    return;
  }
  FillVector<T>().swap(v);
  v.resize(n);
  T* data = v.data();
  const std::ptrdiff_t sn = std::ptrdiff_t(n);
#pragma omp parallel for schedule(static, 4096)
  for (std::ptrdiff_t i = 0; i < sn; ++i) data[i] = value;
}

// v becomes n elements for a loop that then writes every one of them: a FillVector's are left
// unwritten (their pages faulted in by the writers); a std::vector's, which cannot be sized
// unwritten, are zeros in pages faulted in by all threads.
template <class T>
void size_for_overwrite(FillVector<T>& v, size_t n) {
  FillVector<T>().swap(v);
  v.resize(n);
}
template <class T>
void size_for_overwrite(std::vector<T>& v, size_t n) {
  assign_touched(v, n);
}

// A FillVector needs no fill by one thread: assign_touched on one is assign_parallel (the
// CsrMatrix arrays, which builders size with either).
template <class T>
void assign_touched(FillVector<T>& v, size_t n, T value = T()) {
  assign_parallel(v, n, value);
}

}  // namespace pgsim
