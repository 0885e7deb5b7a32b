#pragma once
// x = min(x, value) and x = max(x, value) from many threads at once (compare-and-swap loops),
// for integer fields that parallel loops lower or raise: the result is the extremum of every
// value offered, whatever the threads' order.
#include <type_traits>

namespace pgsim {

template <class T>
void atomic_lower_to(T& x, T value) {
  static_assert(std::is_integral_v<T>, "an integer field");
  T seen = __atomic_load_n(&x, __ATOMIC_RELAXED);
  while (value < seen && !__atomic_compare_exchange_n(&x, &seen, value, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
}

template <class T>
void atomic_raise_to(T& x, T value) {
  static_assert(std::is_integral_v<T>, "an integer field");
  T seen = __atomic_load_n(&x, __ATOMIC_RELAXED);
  while (seen < value && !__atomic_compare_exchange_n(&x, &seen, value, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
}

}  // namespace pgsim
