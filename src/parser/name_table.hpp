#pragma once
// Interned, case-insensitive names: one character arena and one open-addressing
// hash table, so a netlist of tens of millions of nodes costs no per-name allocation.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pgsim {

class NameTable {
 public:
  static constexpr uint32_t npos = UINT32_MAX;

  // Id of `name`, matched case-insensitively; inserts it (keeping this spelling) if new.
  uint32_t intern(std::string_view name);
  // Id of `name` or npos.
  uint32_t find(std::string_view name) const;

  std::string_view operator[](uint32_t id) const {
    return {arena_.data() + offsets_[id], offsets_[id + 1] - offsets_[id]};
  }
  uint32_t size() const { return static_cast<uint32_t>(offsets_.size() - 1); }
  void reserve(size_t names, size_t chars);

 private:
  void grow();
  size_t slot_of(std::string_view name, uint64_t hash) const;

  std::string arena_;
  std::vector<uint64_t> offsets_{0};
  std::vector<uint32_t> slots_ = std::vector<uint32_t>(1024, npos);  // power of two
};

}  // namespace pgsim
