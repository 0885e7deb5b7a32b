#pragma once
// Netlist::node_names (arena and 8-byte offsets: about 20 B per netlist node at 50M nodes) are
// read after the reduction only when the outputs are written. Parked, they are held in a compact
// form through the chain elimination, the CMG build and the solve, where the host's memory peaks.
//
// The form: the names cut into blocks of kParkedNamesBlock ids; in a block, each name after the
// first is stored as what it shares with the one before (the netlist's nodes come in order of
// first appearance, along a wire: n1_6996_1234 then n1_6998_1234 share all but one byte). A name
// is varint(prefix) varint(suffix) varint(middle length) and the middle's bytes: the previous
// name's first prefix bytes, the middle, and the previous name's last suffix bytes. The first
// name of a block has no previous one (prefix and suffix 0), so blocks are parked and restored
// in parallel.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "parser/default_init.hpp"
#include "parser/name_table.hpp"

namespace pgsim {

constexpr uint32_t kParkedNamesBlock = 256;

struct ParkedNames {
  uint32_t count = 0;                // names
  std::vector<uint64_t> block_at;    // where block b's record starts in bytes (blocks + 1 entries)
  std::vector<uint64_t> block_char;  // the arena offset of block b's first name (blocks + 1 entries)
  FillVector<unsigned char> bytes;
};

// Every name of `names` into the result, in id order; names left empty (its memory freed).
ParkedNames park_names(NameTable& names);

// names made again from parked: the same ids and bytes, without an index (as after
// NameTable::drop_index); parked left empty.
void restore_names(ParkedNames& parked, NameTable& names);

}  // namespace pgsim
