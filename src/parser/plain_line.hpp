#pragma once
// The plain netlist line (gpu/gpu_parse.hpp says which lines are plain): its fields read as the CPU
// parser (chunk_parser.cpp) reads them, or a reason to leave the line to the CPU parser. Host and
// device code: the GPU reader runs it on every line, and a CPU test (tests/test_plain_line.cpp)
// holds it to the CPU parser line by line, where the CI machine has no GPU. The rules both apply
// (byte classes, ignored control lines, ground's names, the accepted magnitudes) are defined here
// once, and the CPU parser reads them from here.
#include <cstdint>

#include "host_device.hpp"
#include "netlist.hpp"
#include "plain_number.hpp"
#include "text.hpp"

namespace pgsim::plain_line {

constexpr int64_t kMaxPlainLine = 65535;  // line fields are 16-bit offsets

// The magnitudes pgsim accepts for R, V and I values (besides 0): far beyond any physical grid,
// and small enough that sums and squares in the solvers cannot overflow or underflow.
constexpr double kMinMagnitude = 1e-30, kMaxMagnitude = 1e30;

// What a line is.
enum LineStatus : uint8_t { kSkip, kElement, kEnd, kDecline };
// Why a line declines (LineFields::kind of a declining line), for the log.
enum Decline : uint8_t { kContinuation = 1, kControlByte, kNotPlainElement, kNotPlainNumber, kRejectedValue,
                         kOtherControl, kLongLine };
inline const char* decline_text(int reason) {
  switch (reason) {
    case kContinuation: return "a '+' continuation line";
    case kControlByte: return "a control byte";
    case kNotPlainElement: return "a line other than a four-field R, V or I element";
    case kNotPlainNumber: return "a value other than a plain number";
    case kRejectedValue: return "a value the parser rejects";
    case kOtherControl: return "a control line other than .end and the ignored ones";
    case kLongLine: return "a line of 64 KiB or more";
    default: return "an unknown reason";
  }
}

// A line as parse_plain_line() leaves it: 24 bytes (the GPU reader keeps one a line of the file).
struct LineFields {
  double value;
  uint16_t name_at, name_len, plus_at, plus_len, minus_at, minus_len;  // from the line's start
  uint8_t status;  // LineStatus
  uint8_t kind;    // ElementKind of an element, Decline of a declining line
  uint8_t ground;  // bit 0: the plus node is ground ("0" or "gnd"), bit 1: the minus node
  uint8_t unused;
};
static_assert(sizeof(LineFields) == 24);

// The tokenizer's byte classes: blanks and ',' separate tokens, ';' starts a comment, other control
// bytes are refused (chunk_parser.cpp keeps them as a table).
enum ByteClass : uint8_t { kPlain, kSpace, kSemicolon, kControl };
PGSIM_HOST_DEVICE constexpr ByteClass byte_class(unsigned char c) {
  if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' || c == ',') return kSpace;
  if (c < 0x20 || c == 0x7f) return kControl;
  return c == ';' ? kSemicolon : kPlain;
}

// s[0, n) equals the lower-case word w (ASCII case ignored).
PGSIM_HOST_DEVICE inline bool is_word(const char* s, uint32_t n, const char* w) {
  uint32_t i = 0;
  for (; i < n && w[i]; ++i)
    if (lower(s[i]) != w[i]) return false;
  return i == n && !w[i];
}

// A node name that means ground: "0" or "gnd" (any case).
PGSIM_HOST_DEVICE inline bool is_ground_name(const char* s, uint32_t n) {
  return (n == 1 && s[0] == '0') || is_word(s, n, "gnd");
}

// A control line that the parser ignores without a warning.
PGSIM_HOST_DEVICE inline bool is_ignored_control(const char* s, uint32_t n) {
  const char* ignored[] = {".op",   ".options", ".option", ".title", ".dc", ".probe",  ".plot",
                           ".save", ".temp",    ".width",  ".nodeset", ".ic", ".global"};
  for (const char* w : ignored)
    if (is_word(s, n, w)) return true;
  return false;
}

// One physical line (without its '\n'): skipped (blank, a comment, an ignored control line), an
// element, .end, or kDecline with the reason in `kind`, wherever the CPU parser would do more than
// this (a continuation, a dot command it acts on, a warning) or fail. `powers`: kPowersOfTen.
PGSIM_HOST_DEVICE inline LineFields parse_plain_line(const char* line, int64_t length, const PowersOfTen& powers) {
  LineFields f{};
  f.status = kDecline;
  if (length > kMaxPlainLine) {
    f.kind = kLongLine;
    return f;
  }
  const uint32_t n = uint32_t(length);
  uint32_t s = 0;
  while (s < n && (line[s] == ' ' || line[s] == '\t')) ++s;
  if (s < n && line[s] == '+') {
    f.kind = kContinuation;
    return f;
  }
  if (s < n && line[s] == '*') {
    for (uint32_t i = s; i < n; ++i)
      if (line[i] == '\0') {
        f.kind = kControlByte;
        return f;
      }
    f.status = kSkip;
    return f;
  }
  uint32_t at[5], len[5], tokens = 0;
  for (uint32_t p = s; p < n;) {
    const ByteClass c = byte_class(static_cast<unsigned char>(line[p]));
    if (c == kSpace) {
      ++p;
    } else if (c == kPlain && line[p] != '$') {
      const uint32_t start = p++;
      while (p < n && byte_class(static_cast<unsigned char>(line[p])) == kPlain) ++p;
      if (tokens < 5) at[tokens] = start, len[tokens] = p - start;
      ++tokens;
    } else if (c == kControl) {
      f.kind = kControlByte;
      return f;
    } else {
      break;  // a ';' or '$' comment: the rest of the line is not read
    }
  }
  if (tokens == 0) {
    f.status = kSkip;
    return f;
  }
  const char* first = line + at[0];
  if (first[0] == '.') {
    if (is_word(first, len[0], ".end")) {
      f.status = kEnd;
      return f;
    }
    if (is_ignored_control(first, len[0])) {
      f.status = kSkip;
      return f;
    }
    f.kind = kOtherControl;
    return f;
  }
  const char letter = lower(first[0]);
  if ((letter != 'r' && letter != 'v' && letter != 'i') || tokens != 4) {
    f.kind = kNotPlainElement;
    return f;
  }
  double value;
  const char* number = line + at[3];
  const char* number_end = number + len[3];
  if (!read_plain_number(number, number_end, powers, value) || number != number_end) {  // all of the token
    f.kind = kNotPlainNumber;
    return f;
  }
  const ElementKind kind = letter == 'r' ? ElementKind::Resistor
                           : letter == 'v' ? ElementKind::VoltageSource
                                           : ElementKind::CurrentSource;
  const char* plus = line + at[1];
  const char* minus = line + at[2];
  const bool plus_ground = is_ground_name(plus, len[1]);
  const bool minus_ground = is_ground_name(minus, len[2]);
  const double magnitude = value < 0 ? -value : value;
  const bool rejected = (kind == ElementKind::Resistor && value < 0) || magnitude > kMaxMagnitude ||
                        (magnitude != 0 && magnitude < kMinMagnitude) ||
                        (kind == ElementKind::VoltageSource && value != 0 &&
                         (iequals(plus, len[1], minus, len[2]) || (plus_ground && minus_ground)));
  if (rejected) {
    f.kind = kRejectedValue;
    return f;
  }
  f.value = value;
  f.name_at = uint16_t(at[0]), f.name_len = uint16_t(len[0]);
  f.plus_at = uint16_t(at[1]), f.plus_len = uint16_t(len[1]);
  f.minus_at = uint16_t(at[2]), f.minus_len = uint16_t(len[2]);
  f.status = kElement;
  f.kind = uint8_t(kind);
  f.ground = uint8_t(plus_ground) | uint8_t(minus_ground) << 1;
  return f;
}

}  // namespace pgsim::plain_line
