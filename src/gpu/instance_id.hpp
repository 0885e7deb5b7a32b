#pragma once
// A number no other object of this process gets. Unlike an address it is never reused after
// the object is gone, so captured CUDA graphs keyed on it cannot be replayed against the freed
// buffers of an object that happens to be built at the same address.
#include <atomic>
#include <cstdint>

namespace pgsim::gpu {

class InstanceId {
 public:
  InstanceId() : id_(next()) {}
  InstanceId(const InstanceId&) : id_(next()) {}
  InstanceId& operator=(const InstanceId&) { return *this; }
  uint64_t value() const { return id_; }

 private:
  static uint64_t next() {
    static std::atomic<uint64_t> counter{0};
    return ++counter;
  }
  uint64_t id_;
};

}  // namespace pgsim::gpu
