#include "name_table.hpp"

#include <cstring>
#include <stdexcept>

namespace pgsim {

size_t NameTable::slot_of(const Shard& shard, std::string_view name, uint64_t h, const Resolver* resolver) const {
  const uint32_t tag = tag_of(h);
  const size_t n = shard.slots.size();
  for (size_t s = home(tag, n);; s = s + 1 == n ? 0 : s + 1) {
    const Slot& slot = shard.slots[s];
    if (slot.id == npos || (slot.tag == tag && same(name_of(slot.id, resolver), name))) return s;
  }
}

void NameTable::insert(Shard& shard, size_t slot, uint64_t h, uint32_t id) {
  shard.slots[slot] = {tag_of(h), id};
  if (2 * ++shard.used > shard.slots.size()) rehash(shard, 2 * shard.slots.size());
}

uint32_t NameTable::find(std::string_view name) const {
  if (shards_.empty()) throw std::logic_error("NameTable::find after drop_index");
  const uint64_t h = hash(name);
  const Shard& shard = shards_[shard_of(h)];
  return shard.slots[slot_of(shard, name, h, nullptr)].id;
}

uint32_t NameTable::intern(std::string_view name, uint64_t h) {
  if (shards_.empty()) throw std::logic_error("NameTable::intern after drop_index");
  Shard& shard = shards_[shard_of(h)];
  const size_t s = slot_of(shard, name, h, nullptr);
  if (shard.slots[s].id != npos) return shard.slots[s].id;
  if (size() >= kProvisional) throw std::length_error("more than 2^31 names");
  const uint32_t id = size();
  arena_.insert(arena_.end(), name.begin(), name.end());
  offsets_.push_back(arena_.size());
  insert(shard, s, h, id);
  return id;
}

void NameTable::prefetch(uint64_t h) const {
  const Shard& shard = shards_[shard_of(h)];
  __builtin_prefetch(&shard.slots[home(tag_of(h), shard.slots.size())]);
}

uint32_t NameTable::candidate(uint64_t h) const {
  const Shard& shard = shards_[shard_of(h)];
  const uint32_t tag = tag_of(h);
  const size_t n = shard.slots.size();
  for (size_t s = home(tag, n);; s = s + 1 == n ? 0 : s + 1) {
    const Slot& slot = shard.slots[s];
    if (slot.id == npos || slot.tag == tag) return slot.id;
  }
}

uint32_t NameTable::prefetch_place(uint64_t h) const {
  const uint32_t id = candidate(h);
  if (id == npos || (id & kProvisional)) return id;
  __builtin_prefetch(&offsets_[id]);
  __builtin_prefetch(&offsets_[id + 1]);
  return id;
}

void NameTable::prefetch_text(uint32_t id, const Resolver& resolver) const {
  if (id == npos) return;
  const std::string_view name = name_of(id, &resolver);
  if (name.empty()) return;
  __builtin_prefetch(name.data());
  __builtin_prefetch(name.data() + name.size() - 1);  // a name may straddle two cache lines
}

uint32_t NameTable::lookup_or_reserve(std::string_view name, uint64_t h, uint32_t key, const Resolver& resolver) {
  Shard& shard = shards_[shard_of(h)];
  const size_t s = slot_of(shard, name, h, &resolver);
  if (shard.slots[s].id != npos) return shard.slots[s].id;
  insert(shard, s, h, key | kProvisional);
  return npos;
}

void NameTable::settle(uint64_t h, uint32_t key, uint32_t id) {
  Shard& shard = shards_[shard_of(h)];
  const size_t n = shard.slots.size();
  size_t s = home(tag_of(h), n);
  while (shard.slots[s].id != (key | kProvisional)) s = s + 1 == n ? 0 : s + 1;  // it is there: no empty slot first
  shard.slots[s].id = id;
}

void NameTable::extend(uint32_t count, uint64_t bytes) {
  if (uint64_t(size()) + count >= kProvisional) throw std::length_error("more than 2^31 names");
  arena_.resize(arena_.size() + bytes);
  offsets_.resize(offsets_.size() + count);
}

NameTable::Appended NameTable::append_whole(uint32_t count, uint64_t bytes) {
  const size_t text_at = arena_.size(), ends_at = offsets_.size();
  extend(count, bytes);
  return {arena_.data() + text_at, offsets_.data() + ends_at};
}

void NameTable::rehash(Shard& shard, size_t slot_count) {
  std::vector<Slot> old(slot_count);
  old.swap(shard.slots);
  for (const Slot& slot : old) {
    if (slot.id == npos) continue;
    size_t s = home(slot.tag, slot_count);
    while (shard.slots[s].id != npos) s = s + 1 == slot_count ? 0 : s + 1;
    shard.slots[s] = slot;
  }
}

void NameTable::reserve(size_t names, size_t chars) {
  arena_.reserve(chars);
  offsets_.reserve(names + 1);
}

void NameTable::reserve_index(size_t names) {
  const size_t want = 2 * (names / kShards + 1);
  // Shards on all threads: a big index is as long to write as a block of netlist to parse.
#pragma omp parallel for schedule(static) if (want * kShards >= (1u << 20))
  for (size_t s = 0; s < kShards; ++s)
    if (want > shards_[s].slots.size()) rehash(shards_[s], want);
}

void NameTable::drop_index() { std::vector<Shard>().swap(shards_); }


}  // namespace pgsim
