#pragma once
// Many device arrays carved out of one cudaMalloc: each cudaMalloc maps memory and costs far more
// than a pointer bump, and a hierarchy's upload needs about ten arrays per level.
// Sized by a first pass of the same take() calls on an arena without memory:
//   DeviceArena sizing;  carve(sizing);   // take() returns nullptr, counts bytes
//   DeviceArena arena(sizing.bytes());  carve(arena);
#include <cstddef>
#include <stdexcept>

#include "gpu/device_buffer.hpp"

namespace pgsim::gpu {

class DeviceArena {
 public:
  DeviceArena() = default;  // sizing only
  explicit DeviceArena(size_t bytes) : memory_(bytes) {}

  // n values of T, aligned for any access (the carving pass must repeat the sizing pass's calls).
  template <class T>
  T* take(size_t n) {
    const size_t at = used_;
    used_ += (n * sizeof(T) + kAlign - 1) / kAlign * kAlign;
    if (memory_.size() == 0) return nullptr;
    if (used_ > memory_.size()) throw std::logic_error("DeviceArena: more taken than sized");
    return reinterpret_cast<T*>(memory_.data() + at);
  }
  size_t bytes() const { return used_; }

 private:
  static constexpr size_t kAlign = 256;
  DeviceBuffer<char> memory_;
  size_t used_ = 0;
};

}  // namespace pgsim::gpu
