#include "app/parked_names.hpp"

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>

namespace pgsim {
namespace {

size_t varint_size(uint64_t v) {
  size_t n = 1;
  for (; v >= 0x80; v >>= 7) ++n;
  return n;
}

unsigned char* put_varint(unsigned char* p, uint64_t v) {
  for (; v >= 0x80; v >>= 7) *p++ = static_cast<unsigned char>(v | 0x80);
  *p++ = static_cast<unsigned char>(v);
  return p;
}

uint64_t get_varint(const unsigned char*& p) {
  uint64_t v = 0;
  for (unsigned shift = 0;; shift += 7) {
    const unsigned char c = *p++;
    v |= uint64_t(c & 0x7f) << shift;
    if (c < 0x80) return v;
  }
}

struct Shared {
  size_t prefix = 0, suffix = 0;
};

// What name shares with prev: their longest common prefix, then the longest common suffix of
// what is left of both.
Shared shared(std::string_view prev, std::string_view name) {
  const size_t most = std::min(prev.size(), name.size());
  Shared s;
  while (s.prefix < most && prev[s.prefix] == name[s.prefix]) ++s.prefix;
  while (s.suffix < most - s.prefix && prev[prev.size() - 1 - s.suffix] == name[name.size() - 1 - s.suffix]) ++s.suffix;
  return s;
}

uint32_t block_count(uint32_t names) { return (names + kParkedNamesBlock - 1) / kParkedNamesBlock; }

// visit(shared, middle) for every name of block b, in id order.
template <class Visit>
void for_each_name(const NameTable& names, uint32_t b, Visit visit) {
  const uint32_t first = b * kParkedNamesBlock, last = std::min(names.size(), first + kParkedNamesBlock);
  std::string_view prev;
  for (uint32_t id = first; id < last; ++id) {
    const std::string_view name = names[id];
    const Shared s = id == first ? Shared() : shared(prev, name);
    visit(s, name.substr(s.prefix, name.size() - s.prefix - s.suffix));
    prev = name;
  }
}

}  // namespace

ParkedNames park_names(NameTable& names) {
  ParkedNames p;
  p.count = names.size();
  const auto blocks = static_cast<int64_t>(block_count(p.count));
  // block_at[b + 1], block_char[b + 1]: block b's record bytes and characters, then (summed) where the next block's go.
  p.block_at.assign(size_t(blocks) + 1, 0);
  p.block_char.assign(size_t(blocks) + 1, 0);
#pragma omp parallel for schedule(static, 64)
  for (int64_t b = 0; b < blocks; ++b) {
    uint64_t bytes = 0, chars = 0;
    for_each_name(names, uint32_t(b), [&](Shared s, std::string_view middle) {
      bytes += varint_size(s.prefix) + varint_size(s.suffix) + varint_size(middle.size()) + middle.size();
      chars += s.prefix + middle.size() + s.suffix;
    });
    p.block_at[size_t(b) + 1] = bytes;
    p.block_char[size_t(b) + 1] = chars;
  }
  for (size_t b = 1; b < p.block_at.size(); ++b) {
    p.block_at[b] += p.block_at[b - 1];
    p.block_char[b] += p.block_char[b - 1];
  }
  p.bytes.resize(p.block_at.back());  // unwritten: every block's record is written below
#pragma omp parallel for schedule(static, 64)
  for (int64_t b = 0; b < blocks; ++b) {
    unsigned char* out = p.bytes.data() + p.block_at[size_t(b)];
    for_each_name(names, uint32_t(b), [&out](Shared s, std::string_view middle) {
      out = put_varint(out, s.prefix);
      out = put_varint(out, s.suffix);
      out = put_varint(out, middle.size());
      out = std::copy(middle.begin(), middle.end(), out);
    });
  }
  names = NameTable();
  names.drop_index();
  return p;
}

void restore_names(ParkedNames& parked, NameTable& names) {
  NameTable t;
  t.drop_index();
  t.extend(parked.count, parked.block_char.back());
  const auto blocks = static_cast<int64_t>(block_count(parked.count));
#pragma omp parallel for schedule(static, 64)
  for (int64_t b = 0; b < blocks; ++b) {
    const unsigned char* in = parked.bytes.data() + parked.block_at[size_t(b)];
    uint64_t at = parked.block_char[size_t(b)];
    const uint32_t first = uint32_t(b) * kParkedNamesBlock, last = std::min(parked.count, first + kParkedNamesBlock);
    std::string name;  // the name before, made into the next one in place
    for (uint32_t id = first; id < last; ++id) {
      const size_t prefix = get_varint(in), suffix = get_varint(in), middle = get_varint(in);
      name.replace(prefix, name.size() - prefix - suffix, reinterpret_cast<const char*>(in), middle);
      in += middle;
      t.place(id, at, name);
      at += name.size();
    }
  }
  names = std::move(t);
  parked = ParkedNames();
}

}  // namespace pgsim
