#pragma once
// Interned, case-insensitive names: one character arena and a hash index split into shards,
// so a netlist of tens of millions of nodes costs no per-name allocation, and the parser can
// intern a block of names on all cores (one thread per shard; parser.cpp says how).
//
// Ids are dense (0, 1, 2, ... in the order names were added) and name i keeps the spelling it
// was first added with. The index: 2^kShardBits shards chosen by hash bits; each shard is an
// open-addressing table (linear probing, at most half full) whose slots hold a name's id and the
// upper 32 bits of its hash, its tag: a probe compares names only when tags agree, and the tag
// alone gives a name's place in its shard, so a shard grows without reading names.
//
// Bulk (parallel) interning, used by the parser: a shard may hold *provisional* entries, ids with
// the kProvisional bit set that stand for a name not yet in the arena, whose text a resolver gives.
// lookup_or_reserve() and settle() touch one shard only: different threads may work on different
// shards at once, while nobody appends names. extend() and place() then append the new names in id
// order (any thread may place any name), and settle() replaces each provisional id by the final one.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "default_init.hpp"

namespace pgsim {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "NameTable::tail reads names as little-endian words");

class NameTable {
 public:
  static constexpr uint32_t npos = UINT32_MAX;
  static constexpr uint32_t kProvisional = 1u << 31;  // final ids stay below it
  static constexpr unsigned kShardBits = 7;
  static constexpr size_t kShards = size_t(1) << kShardBits;

  // Hash of `name`, the same for every spelling that matches case-insensitively. The bytes are
  // hashed with bit 0x20 set in each: that folds 'A'..'Z' onto 'a'..'z' in one operation, and also
  // folds some non-letters onto each other ('_' onto 0x7f, '@' onto '`'), which only costs a rare
  // extra comparison: names are still compared exactly (same). Inline: the chunk parser hashes a
  // name of a few words per element line, where a call was a fifth of the hash's instructions.
  static uint64_t hash(std::string_view s) {
    constexpr uint64_t fold = 0x2020202020202020ull;
    uint64_t h = 0x243f6a8885a308d3ull ^ s.size();
    size_t i = 0;
    for (; i + 8 <= s.size(); i += 8) h = mix(h, load8(s.data() + i) | fold);
    if (i < s.size()) h = mix(h, tail(s) | fold);
    h *= 0xff51afd7ed558ccdull;  // final avalanche: slots use the low bits, tags the high ones
    return h ^ (h >> 29);
  }
  // True when a and b are the same name (ASCII case ignored), as the table matches names. Eight
  // bytes at a time; the last, partial word is zero-padded on both sides.
  static bool same(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    size_t i = 0;
    for (; i + 8 <= a.size(); i += 8)
      if (!same_word(load8(a.data() + i), load8(b.data() + i))) return false;
    return i == a.size() || same_word(tail(a), tail(b));
  }
  // The bytes after the last whole word of `s` (s.size() % 8 of them, at least one), zero-padded
  // into a word. Without a library call (a memcpy of variable size is one) and without reading
  // outside the name: a name of 8 bytes or more gives its last 8 bytes, shifted; a shorter one
  // its first and last 4 (or 2) bytes, which overlap in bytes they both hold, so OR-ing them is
  // exact (a byte-by-byte loop was most of hashing a short name such as "n1_2_0").
  static uint64_t tail(std::string_view s) {
    const size_t rest = s.size() % 8;
    const char* p = s.data();
    if (s.size() >= 8) return load8(p + s.size() - 8) >> (8 * (8 - rest));
    if (rest >= 4) return load<uint32_t>(p) | (load<uint32_t>(p + rest - 4) << (8 * (rest - 4)));
    if (rest >= 2) return load<uint16_t>(p) | (load<uint16_t>(p + rest - 2) << (8 * (rest - 2)));
    return rest == 1 ? uint64_t(static_cast<unsigned char>(p[0])) : 0;
  }
  static uint64_t load8(const char* p) { return load<uint64_t>(p); }
  // sizeof(Word) bytes at p, little-endian, widened to 64 bits.
  template <class Word>
  static uint64_t load(const char* p) {
    Word w;
    std::memcpy(&w, p, sizeof w);
    return w;
  }
  // The shard that holds names of hash h (bits that the tag, which places a name in its shard, does not hold).
  static size_t shard_of(uint64_t h) { return (h >> (32 - kShardBits)) & (kShards - 1); }

  // Id of `name`, matched case-insensitively; inserts it (keeping this spelling) if new.
  uint32_t intern(std::string_view name) { return intern(name, hash(name)); }
  uint32_t intern(std::string_view name, uint64_t h);  // h: hash(name)
  // Id of `name` or npos.
  uint32_t find(std::string_view name) const;

  std::string_view operator[](uint32_t id) const {
    return {arena_.data() + offsets_[id], offsets_[id + 1] - offsets_[id]};
  }
  uint32_t size() const { return static_cast<uint32_t>(offsets_.size() - 1); }
  // Room for `names` names of `chars` characters in all (capacity: not written until used).
  void reserve(size_t names, size_t chars);
  // An index for `names` names (written at once: every slot is set empty).
  void reserve_index(size_t names);
  // Frees the hash index (the names stay readable by id); intern() and find() are not allowed after.
  void drop_index();

  // --- bulk interning (see the header comment) ---
  // The text of provisional entry `key` (the id without kProvisional).
  struct Resolver {
    std::string_view (*name)(const void* context, uint32_t key);
    const void* context;
  };
  // A lookup's cache misses come in a chain, each address read from the load before: the slot,
  // then (when its tag is the name's) the place where the slot's name keeps its text, then the
  // text, which the lookup compares (tags of different names rarely agree). A caller looking up
  // many names hides them in a pipeline, each stage started some names before the next needs
  // it: prefetch(h) the slot; prefetch_place(h) the name's offsets (a final id's: a provisional
  // one's place is the resolver's), returning the id whose text the lookup will compare first
  // (npos: none), so that prefetch_text(id, resolver), the text, does not probe the slots again.
  // Hints only: whatever they find (the id may be stale by then, names entered meanwhile),
  // lookup_or_reserve() gives the same answer.
  void prefetch(uint64_t h) const;
  uint32_t prefetch_place(uint64_t h) const;
  void prefetch_text(uint32_t id, const Resolver& resolver) const;
  // The id of `name` in its shard (final, or provisional with kProvisional set); when absent,
  // enters it as provisional `key | kProvisional` and returns npos.
  uint32_t lookup_or_reserve(std::string_view name, uint64_t h, uint32_t key, const Resolver& resolver);
  // Replaces the provisional entry `key` (entered for a name of hash h) by `id`.
  void settle(uint64_t h, uint32_t key, uint32_t id);
  // Makes room for `count` more names of `bytes` characters in all, to be placed next.
  void extend(uint32_t count, uint64_t bytes);
  // Writes name `id` (size() - count <= id < size()) at arena offset `offset`: each new name must
  // start where the one before it ends, the first at the old arena end.
  void place(uint32_t id, uint64_t offset, std::string_view name) {
    copy_name(arena_.data() + offset, name.data(), name.size());
    offsets_[id + 1] = offset + name.size();
  }
  uint64_t arena_bytes() const { return offsets_.back(); }
  // Room for `count` more names of `bytes` characters in all that the caller writes whole, not
  // one by one (the GPU parse copies them from the device): their text goes to `text`, names
  // next to each other in id order, and name i's end, counted from the arena's start, to ends[i].
  // The index does not learn them: drop_index() must follow before any lookup.
  struct Appended {
    char* text;
    uint64_t* ends;
  };
  Appended append_whole(uint32_t count, uint64_t bytes);

 private:
  static uint64_t mix(uint64_t h, uint64_t w) {
    h ^= w;
    h *= 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 32);
  }
  // Eight bytes of two names the same but for ASCII case. Most matches are spelled alike, and most
  // mismatches differ in a bit that no case folding changes: both are found without lower-casing
  // (which, on both words, was most of a mismatch's cost: callgrind, the chunk parser comparing a
  // node name with the one before it).
  static bool same_word(uint64_t x, uint64_t y) {
    const uint64_t differ = x ^ y;
    if (differ == 0) return true;
    if (differ & ~0x2020202020202020ull) return false;
    return lower8(x) == lower8(y);
  }
  // Eight bytes with ASCII 'A'..'Z' lower-cased (SWAR: no per-byte branches). Bytes >= 0x80
  // are left alone: names match case-insensitively in ASCII only.
  static uint64_t lower8(uint64_t w) {
    constexpr uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
    const uint64_t ascii = ~w & high;  // high bit set where the byte is < 0x80
    const uint64_t low7 = w & ~high;
    const uint64_t ge_a = (low7 + (0x80 - 'A') * ones) & high;  // byte >= 'A'
    const uint64_t gt_z = (low7 + (0x7f - 'Z') * ones) & high;  // byte > 'Z'
    const uint64_t upper = ge_a & ~gt_z & ascii;
    return w | (upper >> 2);  // 0x80 >> 2 == 0x20, the case bit
  }
  // Copies n bytes by loads and stores of at most 8 bytes, inline: a name is a few words, and a
  // library memcpy of variable size is a call per name (place() runs once per element). Writes
  // [dst, dst + n) only: the bytes after a name may be another thread's (the last word overlaps
  // the one before it rather than running past the name).
  static void copy_name(char* dst, const char* src, size_t n) {
    if (n >= 8) {
      for (size_t i = 0; i + 8 < n; i += 8) std::memcpy(dst + i, src + i, 8);
      std::memcpy(dst + n - 8, src + n - 8, 8);
    } else if (n >= 4) {
      copy_ends<uint32_t>(dst, src, n);
    } else if (n >= 2) {
      copy_ends<uint16_t>(dst, src, n);
    } else if (n == 1) {
      *dst = *src;
    }
  }
  // n bytes, sizeof(Word) <= n <= 2 * sizeof(Word): the first and the last word, loaded before
  // either is stored.
  template <class Word>
  static void copy_ends(char* dst, const char* src, size_t n) {
    Word first, last;
    std::memcpy(&first, src, sizeof(Word));
    std::memcpy(&last, src + n - sizeof(Word), sizeof(Word));
    std::memcpy(dst, &first, sizeof(Word));
    std::memcpy(dst + n - sizeof(Word), &last, sizeof(Word));
  }
  struct Slot {
    uint32_t tag = 0;      // the hash's upper 32 bits
    uint32_t id = npos;    // npos: empty
  };
  struct alignas(64) Shard {
    std::vector<Slot> slots = std::vector<Slot>(16);  // at most half full
    size_t used = 0;
  };
  std::string_view name_of(uint32_t id, const Resolver* resolver) const {
    return id & kProvisional ? resolver->name(resolver->context, id & ~kProvisional) : (*this)[id];
  }
  size_t slot_of(const Shard& shard, std::string_view name, uint64_t h, const Resolver* resolver) const;
  // The id in the first slot of h's probe run that is empty (npos) or holds h's tag: the entry
  // that slot_of() compares the name with first.
  uint32_t candidate(uint64_t h) const;
  void insert(Shard& shard, size_t slot, uint64_t h, uint32_t id);
  void rehash(Shard& shard, size_t slot_count);
  static uint32_t tag_of(uint64_t h) { return static_cast<uint32_t>(h >> 32); }
  // A name's first slot to probe: from its tag alone (so growing a shard reads no names), by
  // multiply-shift, so a shard can have any size (no rounding up to a power of two).
  static size_t home(uint32_t tag, size_t slot_count) { return static_cast<size_t>((uint64_t(tag) * slot_count) >> 32); }

  FillVector<char> arena_;
  FillVector<uint64_t> offsets_ = FillVector<uint64_t>(1, 0);
  std::vector<Shard> shards_ = std::vector<Shard>(kShards);
};

}  // namespace pgsim
