// The per-chunk half of the SPICE reader (DESIGN.md section 1): lines tokenized in place (tokens
// are views into the text, no line costs an allocation), element values checked, names hashed.
#include "chunk_parser.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "plain_line.hpp"
#include "spice_value.hpp"
#include "text.hpp"

namespace pgsim {
namespace {

using plain_line::ByteClass, plain_line::kPlain, plain_line::kSpace, plain_line::kSemicolon, plain_line::kControl;
using plain_line::kMinMagnitude, plain_line::kMaxMagnitude;

bool is_ground_name(std::string_view name) { return plain_line::is_ground_name(name.data(), uint32_t(name.size())); }

// Element kinds that SPICE has but a DC power-grid netlist cannot carry.
bool is_unsupported_element(char c) {
  switch (lower(c)) {
    case 'e': case 'f': case 'g': case 'h': case 'd': case 'q': case 'm': case 'j': case 'x': case 'k':
    case 'b': case 's': case 'w': case 't': case 'o': case 'u': case 'y': case 'z': case 'p':
      return true;
    default:
      return false;
  }
}

// Byte classes for the tokenizer (plain_line::byte_class) as a table: one lookup per byte instead
// of a chain of compares.
struct ByteClasses {
  uint8_t of[256];
  constexpr ByteClasses() : of() {
    for (int c = 0; c < 256; ++c) of[c] = plain_line::byte_class(static_cast<unsigned char>(c));
  }
};
constexpr ByteClasses kByteClasses;

// The first byte at or after p that is not kPlain, or end: bytes below 0x21 (blanks and
// controls), ',', ';' and 0x7f. With SSE2 (every x86-64), sixteen bytes at a time: a compare per
// class and one movemask, the bit of the first such byte found by one tzcnt (callgrind, 200k-node
// grid, one thread: the eight-byte SWAR loop below, which needs four zero-byte tests a word, was
// about 80 instructions a token and a fifth of the parse's). Elsewhere eight bytes at a time
// (SWAR): a word's flags mark those bytes; the lowest flag of each test is exact (borrows only
// spill upwards), so the lowest flag is the answer. The last bytes before `end` one at a time.
inline const char* skip_plain(const char* p, const char* end) {
#if defined(__SSE2__)
  const __m128i blank = _mm_set1_epi8(0x20), comma = _mm_set1_epi8(','), semicolon = _mm_set1_epi8(';'),
                del = _mm_set1_epi8(0x7f);
  for (; end - p >= 16; p += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i below = _mm_cmpeq_epi8(_mm_max_epu8(v, blank), blank);  // v <= 0x20, unsigned
    const __m128i marks = _mm_or_si128(_mm_or_si128(below, _mm_cmpeq_epi8(v, comma)),
                                       _mm_or_si128(_mm_cmpeq_epi8(v, semicolon), _mm_cmpeq_epi8(v, del)));
    if (const int flags = _mm_movemask_epi8(marks)) return p + __builtin_ctz(static_cast<unsigned>(flags));
  }
#else
  constexpr uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
  auto zero_byte = [](uint64_t x) { return (x - ones) & ~x & high; };
  for (; end - p >= 8; p += 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    const uint64_t flags = ((w - 0x21 * ones) & ~w & high) | zero_byte(w ^ (',' * ones)) |
                           zero_byte(w ^ (';' * ones)) | zero_byte(w ^ (0x7f * ones));
    if (flags) return p + __builtin_ctzll(flags) / 8;
  }
#endif
  while (p < end && kByteClasses.of[static_cast<unsigned char>(*p)] == kPlain) ++p;
  return p;
}

inline const char* skip_blanks(const char* p, const char* end) {
  while (p < end && (*p == ' ' || *p == '\t')) ++p;
  return p;
}

inline const char* line_end(const char* p, const char* end) {
  const char* eol = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
  return eol ? eol : end;
}

// Thrown inside a chunk's parse, caught at its top: the first error stops the chunk.
struct Failure {
  std::string message;
};

// Per-thread scratch, kept from chunk to chunk so that no chunk allocates (and page-faults) it anew.
struct Scratch {
  // The chunk's node-name index: a name's index + 1 (0 when empty) beside the upper 32 bits of
  // its hash, so that a probe passes other names without loading their hashes.
  struct Slot {
    uint32_t index;
    uint32_t tag;
  };
  std::vector<Slot> slots;
  // `count` empty slots (a memset: filling slot by slot with {0, 0} was a loop of stores).
  void empty_slots(size_t count) {
    slots.resize(count);
    std::memset(static_cast<void*>(slots.data()), 0, count * sizeof(Slot));
  }
  std::vector<uint64_t> hashes;  // hash of each node name (ChunkNames::names entry)
};

class ChunkParser {
 public:
  ChunkParser(ChunkResult& out, Scratch& scratch, size_t bytes);
  void parse(const char* p, const char* end, bool file_start);

 private:
  const char* tokenize(const char* p, const char* end);
  void parse_line();
  void element(char letter);
  // The number in an element's value field: the token, or what follows the `R=` of OpenROAD's form.
  static std::optional<double> value_of(ElementKind kind, std::string_view name, std::string_view token);
  static std::string_view value_text(ElementKind kind, std::string_view name, std::string_view token);
  uint32_t node(std::string_view name);
  uint32_t lookup(std::string_view name);
  void grow_index();
  void dot_command();
  [[noreturn]] static void fail(std::string message) { throw Failure{std::move(message)}; }
  template <class F>
  static auto spec(F&& parse) {  // parser/waveform.hpp's errors, at this line
    try {
      return parse();
    } catch (const SpecError& e) {
      fail(e.what());
    }
  }
  [[noreturn]] static void bad_byte(char c) {
    char hex[3];
    std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(c));
    fail("unexpected control character (byte 0x" + std::string(hex) + "): is this a text netlist?");
  }

  ChunkResult& out_;
  Scratch& scratch_;
  size_t mask_;  // scratch_.slots.size() - 1
  std::string_view last_name_;  // the node name last looked up, and its index
  uint32_t last_index_ = 0;
  std::vector<std::string_view> tokens_;
  uint32_t line_ = 0;  // the logical line's first physical line
  bool stop_ = false;
};

ChunkParser::ChunkParser(ChunkResult& out, Scratch& scratch, size_t bytes) : out_(out), scratch_(scratch) {
  // Room for a node name every 16 bytes at most half full (IBM-style lines are ~40 bytes with two
  // nodes; a pgsim-gen grid has a name new to its chunk every 29 bytes, which room for one every
  // 32 made each chunk grow the index once); grown when a chunk has more.
  size_t slots = 64;
  while (slots < bytes / 8) slots *= 2;
  scratch_.empty_slots(slots);
  mask_ = slots - 1;
  scratch_.hashes.clear();
}

// Splits the line at p into whitespace-separated tokens, stopping at a ';' comment or a '$'
// comment that starts a token, and returns the line's end (its '\n', or `end`). The line's end is
// found by the same scan that splits it, not by a search of its own first: each byte of a line
// without a comment is read once. Rejects control characters (binary input) before a comment.
const char* ChunkParser::tokenize(const char* p, const char* end) {
  const uint8_t* cls = kByteClasses.of;
  while (p < end) {
    const uint8_t c = cls[static_cast<unsigned char>(*p)];
    if (c == kSpace) {
      ++p;
    } else if (c == kPlain && *p != '$') {
      const char* start = p;
      p = skip_plain(p + 1, end);  // at a blank, ';', '\n' or another control character: the loop judges it
      tokens_.emplace_back(start, static_cast<size_t>(p - start));
    } else if (*p == '\n') {
      return p;
    } else if (c == kControl) {
      bad_byte(*p);
    } else {
      return line_end(p, end);  // a comment: the rest of the line is not read
    }
  }
  return end;
}

void ChunkParser::parse(const char* p, const char* end, bool file_start) {
  if (file_start && end - p >= 3 && std::memcmp(p, "\xEF\xBB\xBF", 3) == 0) p += 3;  // a UTF-8 byte-order mark
  uint32_t line = 0;
  try {
    while (p < end && !stop_) {
      line_ = ++line;
      out_.stop = p;
      tokens_.clear();
      const char* s = skip_blanks(p, end);
      if (s < end && *s == '+') fail("continuation line '+' with no line before it to continue");
      const char* eol;
      if (s < end && *s == '*') {
        eol = line_end(s, end);
        if (std::memchr(s, '\0', static_cast<size_t>(eol - s))) bad_byte('\0');
      } else {
        eol = tokenize(s, end);
      }
      p = eol < end ? eol + 1 : end;
      // Continuation lines ('+' first) extend this logical line.
      while (p < end) {
        const char* q = skip_blanks(p, end);
        if (q >= end || *q != '+') break;
        ++line;
        const char* ceol = tokenize(q + 1, end);
        p = ceol < end ? ceol + 1 : end;
      }
      if (!tokens_.empty()) parse_line();
    }
    out_.stop = p;
    out_.lines = line;
  } catch (const Failure& f) {
    out_.error = ChunkError{line_, f.message};
    out_.lines = line_ - 1;
  }
}

void ChunkParser::parse_line() {
  const std::string_view first = tokens_[0];
  if (first[0] == '.') return dot_command();
  const char letter = lower(first[0]);
  switch (letter) {
    case 'r': case 'v': case 'i': case 'c': case 'l':
      return element(letter);
    default:
      if (is_unsupported_element(letter))
        fail("element " + shown(first) + ": type '" + std::string(1, first[0]) +
             "' is not supported in a power-grid netlist (R, V, I, C and L are)");
      fail("unknown element " + shown(first) + ": a line must start with R, V, I, C, L, '.', '*' or '+'");
  }
}

// The one place where an element line's fields become an element: kind, value and its checks.
void ChunkParser::element(char letter) {
  static constexpr const char* kWhat[] = {"resistance", "voltage", "current", "capacitance", "inductance"};
  const ElementKind kind = letter == 'r'   ? ElementKind::Resistor
                           : letter == 'v' ? ElementKind::VoltageSource
                           : letter == 'i' ? ElementKind::CurrentSource
                           : letter == 'c' ? ElementKind::Capacitor
                                           : ElementKind::Inductor;
  const char* what = kWhat[static_cast<int>(kind)];
  const std::string_view name = tokens_[0];
  if (tokens_.size() < 3) fail("element " + shown(name) + " needs two nodes and a value");
  size_t vi = 3;
  const bool is_source = kind == ElementKind::VoltageSource || kind == ElementKind::CurrentSource;
  if (is_source && tokens_.size() > 3 && iequals(tokens_[3], "dc")) vi = 4;
  if (tokens_.size() <= vi) fail("element " + shown(name) + " has no " + what + " value");
  const bool has_value = !(is_source && vi == 3 && is_source_spec(tokens_[vi]));  // "I1 a b PULSE(...)"
  std::optional<Waveform> waveform;
  if (is_source && tokens_.size() > vi + has_value)
    waveform = spec([&] { return parse_source_spec(tokens_, vi + has_value); });
  auto value = has_value ? value_of(kind, name, tokens_[vi])
                         : std::optional<double>(waveform ? waveform->first_value() : 0.0);
  if (!value) fail("element " + shown(name) + ": " + shown(tokens_[vi]) + " is not a finite number");
  if (tokens_.size() > vi + 1) {
    if (kind == ElementKind::Resistor || (is_source && has_value && !is_source_spec(tokens_[vi + 1])))
      fail("element " + shown(name) + ": unexpected field " + shown(tokens_[vi + 1]) + " after the value");
  }
  if (kind == ElementKind::Resistor && *value < 0)
    fail("resistor " + shown(name) + " has a negative resistance " + shown(tokens_[vi]));
  if ((kind == ElementKind::Capacitor || kind == ElementKind::Inductor) && *value < 0)
    fail("element " + shown(name) + " has a negative " + what + " " + shown(tokens_[vi]));
  const double magnitude = std::abs(*value);
  const bool checked_range = kind == ElementKind::Resistor || is_source;  // C and L values are unused at DC
  if (checked_range && (magnitude > kMaxMagnitude || (magnitude != 0 && magnitude < kMinMagnitude))) {
    fail("element " + shown(name) + ": the " + what + " " + shown(tokens_[vi]) +
         " is outside the range pgsim accepts (0, or 1e-30 to 1e30 in magnitude)");
  }
  const std::string_view plus = tokens_[1], minus = tokens_[2];
  if (kind == ElementKind::VoltageSource && *value != 0 &&
      (iequals(plus, minus) || (is_ground_name(plus) && is_ground_name(minus))))
    fail("voltage source " + shown(name) + " has both ends on node " + shown(plus) + " but forces " +
         shown(tokens_[vi]) + " across them");
  if (waveform)
    out_.transient.waveforms.push_back({static_cast<uint32_t>(out_.elements.size()), std::move(*waveform)});
  const uint32_t p = node(plus), m = node(minus);
  out_.elements.push_back({*value, line_, p, m, kind});
  out_.element_names.push_back({static_cast<uint32_t>(name.data() - out_.text), static_cast<uint32_t>(name.size())});
  out_.element_name_bytes += name.size();
}

// The token read as a number first: parse_spice_value takes only letters after a number, so a
// token with an '=' never reads as one, and a plain number is not searched for an '=' first.
std::optional<double> ChunkParser::value_of(ElementKind kind, std::string_view name, std::string_view token) {
  if (std::optional<double> value = parse_spice_value(token)) return value;
  return parse_spice_value(value_text(kind, name, token));
}

std::string_view ChunkParser::value_text(ElementKind kind, std::string_view name, std::string_view token) {
  const size_t eq = token.find('=');
  if (eq == std::string_view::npos) return token;
  // OpenROAD's write_pg_spice writes `R0 a b R=1.000000e-03`: the key is the element's own letter.
  const char letter = element_letter(kind);
  const bool keyed = kind == ElementKind::Resistor || kind == ElementKind::Capacitor || kind == ElementKind::Inductor;
  if (keyed && eq == 1 && lower(token[0]) == lower(letter)) return token.substr(2);
  static constexpr const char* kForm[] = {"a resistor's value is 'R=value' or a number",
                                          "a voltage source's value is a number, after an optional DC",
                                          "a current source's value is a number, after an optional DC",
                                          "a capacitor's value is 'C=value' or a number",
                                          "an inductor's value is 'L=value' or a number"};
  fail("element " + shown(name) + ": unexpected " + shown(token) + ": " + kForm[static_cast<int>(kind)]);
}

// The index of node `name` among the chunk's node names, added at its first occurrence.
uint32_t ChunkParser::node(std::string_view name) {
  if (name.size() == 3 && iequals(name, "gnd")) return ChunkElement::kGround;  // "0" is the table's id 0
  // A wire is mostly written as a chain of segments, each line starting at the node where the
  // line before ended (ibmpg1: 59% of element lines, a pgsim-gen grid: 68%): that node, the last
  // one looked up, is compared first, without a hash or a probe. The same match as the index's.
  if (name.size() == last_name_.size() && NameTable::same(name, last_name_)) return last_index_;
  last_name_ = name;
  last_index_ = lookup(name);
  return last_index_;
}

uint32_t ChunkParser::lookup(std::string_view name) {
  const uint64_t h = NameTable::hash(name);
  const auto tag = static_cast<uint32_t>(h >> 32);
  std::vector<uint64_t>& hashes = scratch_.hashes;
  for (size_t s = h & mask_;; s = (s + 1) & mask_) {
    const Scratch::Slot slot = scratch_.slots[s];
    if (slot.index == 0) {
      const auto index = static_cast<uint32_t>(hashes.size());
      scratch_.slots[s] = {index + 1, tag};
      out_.nodes.names.push_back({static_cast<uint32_t>(name.data() - out_.text), static_cast<uint32_t>(name.size())});
      hashes.push_back(h);
      if (2 * hashes.size() > scratch_.slots.size()) grow_index();
      return index;
    }
    if (slot.tag == tag && NameTable::same(out_.node_name(slot.index - 1), name)) return slot.index - 1;
  }
}

void ChunkParser::grow_index() {
  std::vector<Scratch::Slot>& slots = scratch_.slots;
  scratch_.empty_slots(2 * slots.size());
  mask_ = slots.size() - 1;
  const std::vector<uint64_t>& hashes = scratch_.hashes;
  for (uint32_t i = 0; i < hashes.size(); ++i) {
    size_t s = hashes[i] & mask_;
    while (slots[s].index) s = (s + 1) & mask_;
    slots[s] = {i + 1, static_cast<uint32_t>(hashes[i] >> 32)};
  }
}

void ChunkParser::dot_command() {
  const std::string_view cmd = tokens_[0];
  const auto event = [&](ChunkEvent::Kind kind, std::string_view text) {
    out_.events.push_back({kind, line_, static_cast<uint32_t>(out_.elements.size()), std::string(text)});
  };
  if (iequals(cmd, ".end")) {
    event(ChunkEvent::End, {});
    stop_ = true;
    return;
  }
  if (iequals(cmd, ".include") || iequals(cmd, ".inc")) {
    if (tokens_.size() < 2) fail(".include needs a file name");
    std::string_view f = tokens_[1];
    if (f.size() >= 2 && (f.front() == '"' || f.front() == '\'') && f.back() == f.front()) f = f.substr(1, f.size() - 2);
    if (f.empty()) fail(".include has an empty file name");
    event(ChunkEvent::Include, f);
    stop_ = true;
    return;
  }
  if (iequals(cmd, ".subckt") || iequals(cmd, ".ends") || iequals(cmd, ".lib") || iequals(cmd, ".param"))
    fail(shown(cmd) + " is not supported: pgsim reads flat netlists");
  if (iequals(cmd, ".tran")) {
    out_.transient.tran = spec([&] { return parse_tran(tokens_); });
    out_.transient.tran->line = line_;
    return;
  }
  if (iequals(cmd, ".print")) {
    if (auto names = spec([&] { return parse_print(tokens_); }))
      for (std::string& n : *names) out_.transient.printed.push_back({std::move(n), 0, line_});
    return;
  }
  if (plain_line::is_ignored_control(cmd.data(), uint32_t(cmd.size()))) return;
  event(ChunkEvent::UnknownControl, cmd);
}

// Groups a chunk's names by shard (a counting sort, so chunk order is kept within each shard).
void group_by_shard(ChunkNames& n, const std::vector<uint64_t>& hashes) {
  n.shard_begin.assign(NameTable::kShards + 1, 0);
  for (uint64_t h : hashes) ++n.shard_begin[NameTable::shard_of(h) + 1];
  for (size_t s = 0; s < NameTable::kShards; ++s) n.shard_begin[s + 1] += n.shard_begin[s];
  n.by_shard.resize(hashes.size());
  std::vector<uint32_t> next(n.shard_begin.begin(), n.shard_begin.end() - 1);
  for (uint32_t i = 0; i < hashes.size(); ++i)
    n.by_shard[next[NameTable::shard_of(hashes[i])]++] = {hashes[i], i, n.names[i]};
  n.ids.resize(hashes.size());
}

}  // namespace

void parse_chunk(const char* begin, const char* end, bool file_start, ChunkResult& r) {
  thread_local Scratch scratch;
  r.text = begin;
  r.elements.clear();
  r.element_names.clear();
  r.element_name_bytes = 0;
  r.nodes.names.clear();
  r.events.clear();
  r.transient = TransientInputs();
  r.error.reset();
  r.lines = 0;
  r.stop = begin;
  const auto bytes = static_cast<size_t>(end - begin);
  if (bytes > UINT32_MAX) {
    r.error = ChunkError{1, "a line (with its '+' continuations) longer than 4 GiB"};
    scratch.hashes.clear();
  } else {
    // IBM-style lines are ~40 bytes.
    const size_t guess = bytes / 32 + 4;
    r.elements.reserve(guess);
    r.element_names.reserve(guess);
    r.nodes.names.reserve(guess);
    ChunkParser(r, scratch, bytes).parse(begin, end, file_start);
  }
  group_by_shard(r.nodes, scratch.hashes);
}

size_t last_cut(const char* text, size_t lo, size_t hi, size_t limit) {
  for (size_t p = hi; p > lo;) {
    const void* nl = memrchr(text + lo, '\n', p - lo);
    if (!nl) return 0;
    const size_t q = static_cast<size_t>(static_cast<const char*>(nl) - text);
    const char* first = skip_blanks(text + q + 1, text + limit);
    if (first < text + limit && *first != '+') return q + 1;
    p = q;
  }
  return 0;
}

size_t next_cut(const char* text, size_t from, size_t limit) {
  for (size_t p = from; p < limit;) {
    const void* nl = std::memchr(text + p, '\n', limit - p);
    if (!nl) break;
    const size_t s = static_cast<size_t>(static_cast<const char*>(nl) - text) + 1;
    const char* first = skip_blanks(text + s, text + limit);
    if (s < limit && first < text + limit && *first != '+') return s;
    p = s;
  }
  return limit;
}

}  // namespace pgsim
