// SPICE netlist reader (DESIGN.md section 1). The whole file is read in one block and
// tokenized in place: tokens are string_views into it, so no line costs an allocation.
#include <spdlog/spdlog.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <unordered_set>

#include "input_error.hpp"
#include "netlist_input.hpp"
#include "netlist.hpp"
#include "shown.hpp"
#include "spice_value.hpp"

namespace pgsim {
namespace {

constexpr int kMaxIncludeDepth = 16;
constexpr uint64_t kProgressStep = 8u << 20;
constexpr int kMaxDuplicateWarnings = 5;  // then one summary line
// The magnitudes pgsim accepts for R, V and I values (besides 0): far beyond any physical grid,
// and small enough that sums and squares in the solvers cannot overflow or underflow.
constexpr double kMinMagnitude = 1e-30, kMaxMagnitude = 1e30;

inline char lower(char c) { return c >= 'A' && c <= 'Z' ? char(c + ('a' - 'A')) : c; }

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

bool istarts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix);
}

std::string read_file(const std::string& path) {
  NetlistInput input(path);
  std::string text(static_cast<size_t>(input.total()), '\0');
  size_t got = input.read(text.data(), text.size());
  text.resize(got);
  // A file that grew since its size was taken: read the rest too.
  char block[1 << 16];
  while (size_t n = input.read(block, sizeof block)) text.append(block, n);
  return text;
}

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

// Keywords that may follow a V or I source's DC value (AC and transient specs): ignored at DC.
bool is_source_tail(std::string_view token) {
  for (std::string_view k : {"ac", "pwl", "pulse", "sin", "exp", "sffm"})
    if (istarts_with(token, k)) return true;
  return false;
}

class Parser {
 public:
  Parser(Netlist& netlist, const ParseOptions& options) : nl_(netlist), options_(options) {}

  void parse_text(const std::string& text, const std::string& path, int depth);
  // Elements whose name an earlier element has.
  uint64_t duplicates() const { return duplicates_; }

 private:
  void parse_line(std::string_view first_token);
  // An element parsed but not yet entered in the netlist: its three names are looked up a few
  // elements later, when the table slots prefetched for them have arrived. Elements are
  // entered in order, so node and element ids are as if each were entered at once.
  struct Pending {
    Element element;
    std::array<std::string_view, 3> names;  // element, plus node, minus node: views into the text
    std::array<uint64_t, 3> hashes;
  };
  // A fixed ring of pending elements; push() enters the oldest when it is full.
  class PendingRing {
   public:
    explicit PendingRing(Parser& parser) : parser_(parser) {}
    Pending& push() {
      if (count_ == kLookahead) parser_.enter(pop());
      return ring_[(head_ + count_++) % kLookahead];
    }
    Pending& pop() {
      Pending& p = ring_[head_];
      head_ = (head_ + 1) % kLookahead, --count_;
      return p;
    }
    bool empty() const { return count_ == 0; }

   private:
    static constexpr size_t kLookahead = 16;
    Parser& parser_;
    std::array<Pending, kLookahead> ring_{};
    size_t head_ = 0, count_ = 0;
  };

  void element(char letter);
  void enter(Pending& p);
  // The number in an element's value field: the token, or what follows the `R=` of OpenROAD's form.
  std::string_view value_text(ElementKind kind, std::string_view name, std::string_view token) const;
  void flush_pending();  // before the text the pending names point into goes away
  void dot_command();
  uint32_t node(std::string_view name, uint64_t hash);
  static bool same_node(std::string_view a, std::string_view b);
  [[noreturn]] void fail(const std::string& message) const {
    throw ParseError(nl_.files[file_], line_, message);
  }

  Netlist& nl_;
  const ParseOptions& options_;
  std::vector<std::string_view> tokens_;
  std::vector<uint32_t> element_index_of_name_;
  PendingRing pending_{*this};
  std::unordered_set<std::string> warned_;
  uint32_t file_ = 0;
  uint32_t line_ = 0;
  int depth_ = 0;
  bool ended_ = false;
  uint64_t duplicates_ = 0;
};

// Byte classes for the tokenizer: one table lookup per byte instead of a chain of compares.
enum ByteClass : uint8_t { kPlain, kSpace, kSemicolon, kControl };
struct ByteClasses {
  uint8_t of[256];
  constexpr ByteClasses() : of() {
    for (int c = 0; c < 0x20; ++c) of[c] = kControl;
    of[0x7f] = kControl;
    for (char c : {' ', '\t', '\r', '\f', '\v', ','}) of[static_cast<unsigned char>(c)] = kSpace;
    of[static_cast<unsigned char>(';')] = kSemicolon;
  }
};
constexpr ByteClasses kByteClasses;

// The first byte at or after p that is not kPlain, or end. Eight bytes at a time (SWAR): a
// word's flags mark bytes below 0x21 (blanks and controls), ',', ';' and 0x7f. The lowest
// flag of each test is exact (borrows only spill upwards), so the lowest flag is the answer.
inline const char* skip_plain(const char* p, const char* end) {
  constexpr uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
  auto zero_byte = [](uint64_t x) { return (x - ones) & ~x & high; };
  for (; end - p >= 8; p += 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    const uint64_t flags = ((w - 0x21 * ones) & ~w & high) | zero_byte(w ^ (',' * ones)) |
                           zero_byte(w ^ (';' * ones)) | zero_byte(w ^ (0x7f * ones));
    if (flags) return p + __builtin_ctzll(flags) / 8;
  }
  while (p < end && kByteClasses.of[static_cast<unsigned char>(*p)] == kPlain) ++p;
  return p;
}

// Splits [p, end) into whitespace-separated tokens, stopping at a ';' comment or a '$'
// comment that starts a token. Rejects control characters (binary input).
template <class Fail>
void tokenize(const char* p, const char* end, std::vector<std::string_view>& out, Fail&& fail) {
  const uint8_t* cls = kByteClasses.of;
  while (p < end) {
    const uint8_t c = cls[static_cast<unsigned char>(*p)];
    if (c == kSpace) { ++p; continue; }
    if (c == kSemicolon || *p == '$') return;
    if (c == kControl) fail(*p);
    const char* start = p;
    p = skip_plain(p + 1, end);
    if (p < end && cls[static_cast<unsigned char>(*p)] == kControl) fail(*p);
    out.emplace_back(start, static_cast<size_t>(p - start));
  }
}

void Parser::parse_text(const std::string& text, const std::string& path, int depth) {
  const uint32_t saved_file = file_, saved_line = line_;
  const int saved_depth = depth_;
  file_ = static_cast<uint32_t>(nl_.files.size());
  nl_.files.push_back(path);
  depth_ = depth;
  ended_ = false;
  auto bad_byte = [&](char c) {
    fail("unexpected control character (byte 0x" + [&] {
      char hex[3];
      std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(c));
      return std::string(hex);
    }() + "): is this a text netlist?");
  };

  const char* p = text.data();
  const char* const end = p + text.size();
  if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) p += 3;  // a UTF-8 byte-order mark, as some editors write
  uint32_t line = 0;
  uint64_t next_progress = kProgressStep;
  while (p < end && !ended_) {
    const char* eol = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
    if (!eol) eol = end;
    ++line;
    line_ = line;
    tokens_.clear();
    const char* s = p;
    while (s < eol && (*s == ' ' || *s == '\t')) ++s;
    if (s < eol && *s == '+') fail("continuation line '+' with no line before it to continue");
    if (s < eol && *s != '*') tokenize(s, eol, tokens_, bad_byte);
    else if (s < eol && std::memchr(s, '\0', static_cast<size_t>(eol - s))) bad_byte('\0');
    p = eol < end ? eol + 1 : end;
    // Continuation lines ('+' first) extend this logical line.
    while (p < end) {
      const char* q = p;
      while (q < end && (*q == ' ' || *q == '\t')) ++q;
      if (q >= end || *q != '+') break;
      const char* ceol = static_cast<const char*>(std::memchr(q, '\n', static_cast<size_t>(end - q)));
      if (!ceol) ceol = end;
      ++line;
      tokenize(q + 1, ceol, tokens_, bad_byte);
      p = ceol < end ? ceol + 1 : end;
    }
    if (!tokens_.empty()) parse_line(tokens_[0]);
    if (depth == 0 && options_.progress && uint64_t(p - text.data()) >= next_progress) {
      options_.progress(uint64_t(p - text.data()), text.size(), options_.progress_user);
      next_progress += kProgressStep;
    }
  }
  flush_pending();
  nl_.bytes_read += text.size();
  if (depth == 0 && options_.progress) options_.progress(text.size(), text.size(), options_.progress_user);
  file_ = saved_file;
  line_ = saved_line;
  depth_ = saved_depth;
  ended_ = false;
}

void Parser::parse_line(std::string_view first) {
  if (first[0] == '.') return dot_command();
  char letter = lower(first[0]);
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

bool is_ground_name(std::string_view name) { return name == "0" || iequals(name, "gnd"); }

uint32_t Parser::node(std::string_view name, uint64_t hash) {
  if (iequals(name, "gnd")) return Netlist::ground;
  return nl_.node_names.intern(name, hash);
}

bool Parser::same_node(std::string_view a, std::string_view b) {
  return iequals(a, b) || (is_ground_name(a) && is_ground_name(b));
}

void Parser::element(char letter) {
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
  auto value = parse_spice_value(value_text(kind, name, tokens_[vi]));
  if (!value) fail("element " + shown(name) + ": " + shown(tokens_[vi]) + " is not a finite number");
  if (tokens_.size() > vi + 1) {
    if (kind == ElementKind::Resistor || (is_source && !is_source_tail(tokens_[vi + 1])))
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
  if (kind == ElementKind::VoltageSource && *value != 0 && same_node(plus, minus))
    fail("voltage source " + shown(name) + " has both ends on node " + shown(plus) + " but forces " +
         shown(tokens_[vi]) + " across them");
  Pending& p = pending_.push();
  p.element.kind = kind;
  p.element.value = *value;
  p.element.where = {file_, line_};
  p.names = {name, plus, minus};
  p.hashes = {NameTable::hash(name), NameTable::hash(plus), NameTable::hash(minus)};
  nl_.element_names.prefetch(p.hashes[0]);
  nl_.node_names.prefetch(p.hashes[1]);
  nl_.node_names.prefetch(p.hashes[2]);
}

std::string_view Parser::value_text(ElementKind kind, std::string_view name, std::string_view token) const {
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

void Parser::enter(Pending& p) {
  Element& e = p.element;
  e.plus = node(p.names[1], p.hashes[1]);
  e.minus = node(p.names[2], p.hashes[2]);
  e.name = nl_.element_names.intern(p.names[0], p.hashes[0]);
  if (e.name < element_index_of_name_.size()) {
    // Two elements of one name: both are kept (they are both in the circuit), and the user is told.
    if (++duplicates_ <= kMaxDuplicateWarnings) {
      const Element& first = nl_.elements[element_index_of_name_[e.name]];
      spdlog::warn("{}: duplicate element name {} (first at {}); both elements are kept", nl_.where(e.where),
                   shown(p.names[0]), nl_.where(first.where));
    }
  } else {
    element_index_of_name_.push_back(static_cast<uint32_t>(nl_.elements.size()));
  }
  nl_.elements.push_back(e);
}

void Parser::flush_pending() {
  while (!pending_.empty()) enter(pending_.pop());
}

void Parser::dot_command() {
  const std::string_view cmd = tokens_[0];
  if (iequals(cmd, ".end")) {
    ended_ = true;
    return;
  }
  if (iequals(cmd, ".include") || iequals(cmd, ".inc")) {
    if (tokens_.size() < 2) fail(".include needs a file name");
    std::string_view f = tokens_[1];
    if (f.size() >= 2 && (f.front() == '"' || f.front() == '\'') && f.back() == f.front()) f = f.substr(1, f.size() - 2);
    if (f.empty()) fail(".include has an empty file name");
    if (depth_ + 1 >= kMaxIncludeDepth)
      fail(".include nested more than " + std::to_string(kMaxIncludeDepth) + " deep (a file that includes itself?)");
    std::filesystem::path inc(std::string{f});
    if (inc.is_relative()) inc = std::filesystem::path(nl_.files[file_]).parent_path() / inc;
    std::string text;
    try {
      text = read_file(inc.string());
    } catch (const InputError& e) {
      fail(std::string(".include: ") + e.what());
    }
    parse_text(text, inc.string(), depth_ + 1);
    return;
  }
  if (iequals(cmd, ".subckt") || iequals(cmd, ".ends") || iequals(cmd, ".lib") || iequals(cmd, ".param"))
    fail(shown(cmd) + " is not supported: pgsim reads flat netlists");
  for (std::string_view known : {".op", ".options", ".option", ".title", ".tran", ".dc", ".print", ".probe",
                                 ".plot", ".save", ".temp", ".width", ".nodeset", ".ic", ".global"})
    if (iequals(cmd, known)) return;
  std::string key(cmd);
  for (char& c : key) c = lower(c);
  if (warned_.insert(key).second)
    spdlog::warn("{}:{}: ignoring unknown control line {}", nl_.files[file_], line_, shown(cmd));
}

}  // namespace

char element_letter(ElementKind kind) {
  static constexpr char kLetters[] = {'R', 'V', 'I', 'C', 'L'};
  return kLetters[static_cast<int>(kind)];
}

Netlist::Netlist() { node_names.intern("0"); }

std::string Netlist::where(const SourceLocation& loc) const {
  return files[loc.file] + ":" + std::to_string(loc.line);
}

Netlist parse_netlist_text(const std::string& text, const std::string& name, const ParseOptions& options) {
  Netlist netlist;
  // IBM-style lines are ~40 bytes with two nodes each, about one new node per element.
  netlist.elements.reserve(text.size() / 40);
  netlist.node_names.reserve(text.size() / 60, text.size() / 4);
  netlist.element_names.reserve(text.size() / 40, text.size() / 8);
  Parser parser(netlist, options);
  parser.parse_text(text, name, 0);
  if (parser.duplicates() > kMaxDuplicateWarnings)
    spdlog::warn("{}: {} elements in all share a name with an earlier element (the first {} are listed above)",
                 name, parser.duplicates(), kMaxDuplicateWarnings);
  if (netlist.elements.empty()) throw InputError(name + ": the netlist has no elements");
  return netlist;
}

Netlist parse_netlist(const std::string& path, const ParseOptions& options) {
  return parse_netlist_text(read_file(path), netlist_display_name(path), options);
}

}  // namespace pgsim
