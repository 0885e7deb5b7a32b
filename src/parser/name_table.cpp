#include "name_table.hpp"

#include <cstring>

namespace pgsim {
namespace {

// Eight bytes with ASCII 'A'..'Z' lower-cased (SWAR: no per-byte branches). Bytes >= 0x80
// are left alone: names match case-insensitively in ASCII only.
inline uint64_t lower8(uint64_t w) {
  constexpr uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
  const uint64_t ascii = ~w & high;                 // high bit set where the byte is < 0x80
  const uint64_t low7 = w & ~high;
  const uint64_t ge_a = (low7 + (0x80 - 'A') * ones) & high;  // byte >= 'A'
  const uint64_t gt_z = (low7 + (0x7f - 'Z') * ones) & high;  // byte > 'Z'
  const uint64_t upper = ge_a & ~gt_z & ascii;
  return w | (upper >> 2);                          // 0x80 >> 2 == 0x20, the case bit
}

inline uint64_t mix(uint64_t h, uint64_t w) {
  h ^= w;
  h *= 0x9e3779b97f4a7c15ull;
  return h ^ (h >> 32);
}

// Eight bytes at a time; the last, partial word is zero-padded on both sides.
bool equal_lower(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  size_t i = 0;
  for (; i + 8 <= a.size(); i += 8) {
    uint64_t x, y;
    std::memcpy(&x, a.data() + i, 8);
    std::memcpy(&y, b.data() + i, 8);
    if (x != y && lower8(x) != lower8(y)) return false;  // most matches are spelled alike
  }
  if (i == a.size()) return true;
  uint64_t x = 0, y = 0;
  std::memcpy(&x, a.data() + i, a.size() - i);
  std::memcpy(&y, b.data() + i, a.size() - i);
  return lower8(x) == lower8(y);
}

}  // namespace

// Hashes the bytes with bit 0x20 set in each: that folds 'A'..'Z' onto 'a'..'z' in one
// operation, and also folds some non-letters onto each other ('_' onto 0x7f, '@' onto '`'),
// which only costs a rare extra comparison: names are still compared exactly (equal_lower).
uint64_t NameTable::hash(std::string_view s) {
  constexpr uint64_t fold = 0x2020202020202020ull;
  uint64_t h = 0x243f6a8885a308d3ull ^ s.size();
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = mix(h, w | fold);
  }
  if (i < s.size()) {
    uint64_t w = 0;
    std::memcpy(&w, s.data() + i, s.size() - i);
    h = mix(h, w | fold);
  }
  h *= 0xff51afd7ed558ccdull;  // final avalanche: slots use the low bits, tags the high ones
  return h ^ (h >> 29);
}

size_t NameTable::slot_of(std::string_view name, uint64_t h) const {
  const size_t mask = slots_.size() - 1;
  const uint32_t tag = static_cast<uint32_t>(h >> 32);
  for (size_t s = h & mask;; s = (s + 1) & mask) {
    const Slot& slot = slots_[s];
    if (slot.id == npos || (slot.tag == tag && equal_lower((*this)[slot.id], name))) return s;
  }
}

uint32_t NameTable::find(std::string_view name) const { return slots_[slot_of(name, hash(name))].id; }

uint32_t NameTable::intern(std::string_view name, uint64_t h) {
  const size_t s = slot_of(name, h);
  if (slots_[s].id != npos) return slots_[s].id;
  const uint32_t id = size();
  arena_.append(name);
  offsets_.push_back(arena_.size());
  slots_[s] = {static_cast<uint32_t>(h >> 32), id};
  if (2 * size_t(size()) > slots_.size()) rehash(2 * slots_.size());
  return id;
}

void NameTable::rehash(size_t slot_count) {
  slots_.assign(slot_count, Slot{});
  const size_t mask = slot_count - 1;
  for (uint32_t id = 0; id < size(); ++id) {  // the arena is read in order
    const uint64_t h = hash((*this)[id]);
    size_t s = h & mask;
    while (slots_[s].id != npos) s = (s + 1) & mask;
    slots_[s] = {static_cast<uint32_t>(h >> 32), id};
  }
}

void NameTable::reserve(size_t names, size_t chars) {
  arena_.reserve(chars);
  offsets_.reserve(names + 1);
  size_t want = slots_.size();
  while (want < 2 * names) want *= 2;
  if (want > slots_.size()) rehash(want);
}

}  // namespace pgsim
