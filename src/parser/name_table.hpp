#pragma once
// Interned, case-insensitive names: one character arena and one open-addressing
// hash table, so a netlist of tens of millions of nodes costs no per-name allocation.
//
// Speed (the parser spends most of its time here on large netlists): each slot holds the
// name's id and 32 more bits of its hash, so a probe compares names only when those bits
// agree, and a new name costs one cache miss (its slot). Callers that know several names
// at once hash them first and prefetch() their slots, overlapping those misses.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pgsim {

class NameTable {
 public:
  static constexpr uint32_t npos = UINT32_MAX;

  // Hash of `name`, the same for every spelling that matches case-insensitively.
  static uint64_t hash(std::string_view name);
  // Starts loading the slot where a name of hash `h` is looked for.
  void prefetch(uint64_t h) const { __builtin_prefetch(&slots_[h & (slots_.size() - 1)]); }

  // Id of `name`, matched case-insensitively; inserts it (keeping this spelling) if new.
  uint32_t intern(std::string_view name) { return intern(name, hash(name)); }
  uint32_t intern(std::string_view name, uint64_t h);  // h: hash(name)
  // Id of `name` or npos.
  uint32_t find(std::string_view name) const;

  std::string_view operator[](uint32_t id) const {
    return {arena_.data() + offsets_[id], offsets_[id + 1] - offsets_[id]};
  }
  uint32_t size() const { return static_cast<uint32_t>(offsets_.size() - 1); }
  void reserve(size_t names, size_t chars);

 private:
  struct Slot {
    uint32_t tag = 0;      // the hash's upper 32 bits
    uint32_t id = npos;    // npos: empty
  };
  void rehash(size_t slot_count);
  size_t slot_of(std::string_view name, uint64_t h) const;

  std::string arena_;
  std::vector<uint64_t> offsets_{0};
  std::vector<Slot> slots_ = std::vector<Slot>(1024);  // power of two, at most half full
};

}  // namespace pgsim
