#include "name_table.hpp"

namespace pgsim {
namespace {

inline unsigned char lower(char c) {
  return static_cast<unsigned char>(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
}

uint64_t hash_lower(std::string_view s) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the lower-cased bytes
  for (char c : s) {
    h ^= lower(c);
    h *= 1099511628211ull;
  }
  return h ^ (h >> 29);
}

bool equal_lower(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

}  // namespace

size_t NameTable::slot_of(std::string_view name, uint64_t hash) const {
  const size_t mask = slots_.size() - 1;
  for (size_t s = hash & mask;; s = (s + 1) & mask) {
    uint32_t id = slots_[s];
    if (id == npos || equal_lower((*this)[id], name)) return s;
  }
}

uint32_t NameTable::find(std::string_view name) const {
  return slots_[slot_of(name, hash_lower(name))];
}

uint32_t NameTable::intern(std::string_view name) {
  uint64_t h = hash_lower(name);
  size_t s = slot_of(name, h);
  if (slots_[s] != npos) return slots_[s];
  uint32_t id = size();
  arena_.append(name);
  offsets_.push_back(arena_.size());
  slots_[s] = id;
  if (2 * size_t(size()) > slots_.size()) grow();  // keep the load under 1/2
  return id;
}

void NameTable::grow() {
  std::vector<uint32_t> old(slots_.size() * 2, npos);
  old.swap(slots_);
  const size_t mask = slots_.size() - 1;
  for (uint32_t id = 0; id < size(); ++id) {
    size_t s = hash_lower((*this)[id]) & mask;
    while (slots_[s] != npos) s = (s + 1) & mask;
    slots_[s] = id;
  }
}

void NameTable::reserve(size_t names, size_t chars) {
  arena_.reserve(chars);
  offsets_.reserve(names + 1);
  size_t want = slots_.size();
  while (want < 2 * names) want *= 2;
  if (want > slots_.size()) {
    slots_.assign(want / 2, npos);  // grow() doubles it and rehashes
    grow();
  }
}

}  // namespace pgsim
