#pragma once
// std::vector whose resize() leaves new elements of a trivial type unwritten, for arrays that the
// parser grows and then fills on all threads: std::vector's resize would first zero them on one
// thread (and page in fresh memory there), a serial pass as long as the parallel fill.
#include <memory>
#include <utility>
#include <vector>

namespace pgsim {

template <class T>
struct DefaultInitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  DefaultInitAllocator() = default;
  template <class U>
  DefaultInitAllocator(const DefaultInitAllocator<U>&) noexcept {}
  // Without arguments: default-initialised (for a trivial type, not written at all).
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

template <class T>
using FillVector = std::vector<T, DefaultInitAllocator<T>>;

}  // namespace pgsim
