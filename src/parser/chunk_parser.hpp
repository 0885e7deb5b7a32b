#pragma once
// One chunk of netlist text -> its elements, names and dot commands, with nothing shared: the
// parser (parser.cpp) runs many chunks at once, then enters their results in file order.
//
// Contract: a chunk is a run of whole logical lines (it starts at a line start that is not a '+'
// continuation, or at the file start, and ends before such a line or at the file end). Lines are
// numbered from 1 within the chunk. parse_chunk() reads lines until the chunk ends, or stops after
// an .include or .end line (the caller then reads the include, or ends the file, and parses the
// rest with another call), or at the first error, which it records instead of throwing.
//
// Extending it (new element payloads, new dot commands): give ChunkElement or ChunkEvent the
// fields, fill them here, and enter them where parser.cpp enters elements and events: results are
// entered in file order, so anything recorded here keeps its place.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "netlist.hpp"
#include "waveform.hpp"
#include "shown.hpp"

namespace pgsim {

// A name as the chunk's text spells it.
struct ChunkName {
  uint32_t offset;  // from the chunk's first byte
  uint32_t size;
};

// A chunk's node names, each once: a node's later occurrences in the chunk refer to its first
// (ChunkElement::plus and minus), so interning looks up each node name once per chunk, not once
// per occurrence.
struct ChunkNames {
  // A name's hash, index and text, grouped by NameTable shard (see below): the text beside the
  // index, so that interning finds it without a load from `names` at a scattered index.
  struct Entry {
    uint64_t hash;
    uint32_t index;
    ChunkName name;
  };
  // In order of first appearance in the chunk.
  std::vector<ChunkName> names;
  // Once interned: each name's id; NameTable::npos while it is the first appearance of a name new
  // to the table, or a provisional id (NameTable::kProvisional) for one first seen in an earlier
  // chunk of the same run, until the parser settles it.
  std::vector<uint32_t> ids;
  // Names grouped by NameTable shard, in chunk order within each: by_shard[shard_begin[s] ..
  // shard_begin[s + 1]), stored together so that a shard's pass over a chunk reads one run of memory.
  std::vector<Entry> by_shard;
  std::vector<uint32_t> shard_begin;
};

// An element as its line gives it; its name is ChunkResult::element_names at the element's index.
struct ChunkElement {
  static constexpr uint32_t kGround = UINT32_MAX;  // a node spelt "gnd" (any case): id 0, not a table name
  double value;
  uint32_t line;   // within the chunk
  uint32_t plus;   // index into the chunk's node names, or kGround
  uint32_t minus;
  ElementKind kind;
};

// A dot command the caller acts on in file order.
struct ChunkEvent {
  enum Kind : uint8_t { Include, End, UnknownControl } kind;
  uint32_t line;     // within the chunk
  uint32_t element;  // elements of the chunk before it
  std::string text;  // Include: the file name as written (quotes removed); UnknownControl: the command
};

struct ChunkError {
  uint32_t line;  // within the chunk
  std::string message;
};

struct ChunkResult {
  const char* text = nullptr;  // the chunk's first byte: names are views into it
  std::vector<ChunkElement> elements;
  // Element names are not interned: one per element, in element order (duplicates are found
  // after the parse, parser/duplicate_names.hpp).
  std::vector<ChunkName> element_names;
  uint64_t element_name_bytes = 0;  // their sizes summed, for their place in the table's arena
  ChunkNames nodes;
  std::vector<ChunkEvent> events;
  // Source waveforms (element indices within the chunk), .tran and .print (lines within the
  // chunk, file 0): the parser shifts them and merges them with TransientInputs::append.
  TransientInputs transient;
  std::optional<ChunkError> error;
  uint32_t lines = 0;          // physical lines begun before `stop`
  const char* stop = nullptr;  // where reading stopped: the chunk end, after an .include or .end line, or at the error
  bool stopped_early() const { return error.has_value() || (!events.empty() && events.back().kind != ChunkEvent::UnknownControl); }
  std::string_view element_name(uint32_t k) const { return view(element_names[k]); }
  std::string_view node_name(uint32_t index) const { return view(nodes.names[index]); }
  std::string_view view(const ChunkName& n) const { return {text + n.offset, n.size}; }
};

// Parses [begin, end) (at most 4 GiB, or it is an error) into `r`, replacing what it held (its
// arrays' capacity is kept: the parser hands each block's chunks the previous block's results, so
// that their memory is not given back and paged in again block after block). `file_start`: the
// chunk starts a file (a UTF-8 byte-order mark is skipped, and a '+' line there has nothing to continue).
void parse_chunk(const char* begin, const char* end, bool file_start, ChunkResult& r);

// The last line start s in (lo, hi] whose line is not a '+' continuation, judged from the bytes
// [.., limit); 0 when there is none (a start whose first non-blank byte lies at or past `limit`
// cannot be judged and is skipped).
size_t last_cut(const char* text, size_t lo, size_t hi, size_t limit);

// The first line start s in (from, limit) whose line is not a '+' continuation, or `limit`
// (which must itself be a line start or the text's end).
size_t next_cut(const char* text, size_t from, size_t limit);

// Limits the parser enforces, shared with messages.
constexpr int kMaxIncludeDepth = 16;
constexpr int kMaxDuplicateWarnings = 5;  // then one summary line

}  // namespace pgsim
