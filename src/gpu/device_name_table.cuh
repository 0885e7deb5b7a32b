#pragma once
// A hash table of names on the device, shared by the GPU netlist reader (gpu_parse.cu: a range's
// node and element names) and the node ids' numbering on the ranks' GPUs (gpu_node_ids.cu: the
// names each owner receives), and the copy of chosen names into an arena that both make. Open
// addressing over 32-bit slots, each holding the index of the name that claimed it; names are
// compared as the CPU parser compares them (ASCII case ignored). CUDA code only.
#include <cstdint>

#include "parser/text.hpp"

namespace pgsim::gpu {

constexpr uint32_t kNone = UINT32_MAX;
constexpr uint32_t kGroundRef = UINT32_MAX;  // a reference to ground: id 0, not in the table

// FNV-1a of the lower-cased name, then murmur's finaliser: the table uses the low bits.
__device__ inline uint64_t name_hash(const char* s, uint32_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint32_t i = 0; i < n; ++i) h = (h ^ uint8_t(lower(s[i]))) * 0x100000001b3ull;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

// Each name's slot (kGroundRef for ground): the slot that the first of its spellings to get there
// claimed. `Names` gives name r of `count` (name(r, length): its first byte and length) and whether
// it is ground (ground(r): not entered); the `slots` (mask + 1 of them, a power of two) start kNone.
template <class Names>
__global__ void enter_names(Names names, uint32_t count, uint32_t* slots, uint64_t mask, uint32_t* slot_of) {
  const uint32_t r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= count) return;
  if (names.ground(r)) {
    slot_of[r] = kGroundRef;
    return;
  }
  uint32_t length;
  const char* name = names.name(r, length);
  for (uint64_t s = name_hash(name, length) & mask;; s = (s + 1) & mask) {
    uint32_t held = slots[s];
    if (held == kNone) {
      held = atomicCAS(&slots[s], kNone, r);
      if (held == kNone) {
        slot_of[r] = uint32_t(s);
        return;
      }
    }
    uint32_t held_length;
    const char* held_name = names.name(held, held_length);
    if (iequals(name, length, held_name, held_length)) {
      slot_of[r] = uint32_t(s);
      return;
    }
  }
}

// Each slot's first index, the smallest of the names in it (`first`, one per slot, starts kNone).
static __global__ void first_of_names(const uint32_t* slot_of, uint32_t count, uint32_t* first) {
  const uint32_t r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < count && slot_of[r] != kGroundRef) atomicMin(&first[slot_of[r]], r);
}

// Name k of `names` is `which[k]` of theirs (all in order where `which` is null), written at
// at[k] of the arena; its end, counted from `base`, into ends[k] where ends is given. The reader
// gathers a range's names with it, the numbering the names it sends.
template <class Names>
__global__ void copy_names(Names names, const uint32_t* which, uint32_t count, const uint64_t* at, uint64_t base,
                           char* arena, uint64_t* ends) {
  const uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= count) return;
  uint32_t length;
  const char* name = names.name(which ? which[k] : k, length);
  for (uint32_t i = 0; i < length; ++i) arena[at[k] + i] = name[i];
  if (ends) ends[k] = base + at[k] + length;
}

}  // namespace pgsim::gpu
