#pragma once
// The plain netlist line (gpu/gpu_parse.hpp says which lines are plain): its fields read as the CPU
// parser (chunk_parser.cpp) reads them, or a reason to leave the line to the CPU parser. Host and
// device code: the GPU reader runs it on every line, and a CPU test (tests/test_plain_line.cpp)
// holds it to the CPU parser line by line, where the CI machine has no GPU.
#include <cstdint>

#include "host_device.hpp"
#include "netlist.hpp"
#include "plain_number.hpp"

namespace pgsim::plain_line {

constexpr int64_t kMaxPlainLine = 65535;  // line fields are 16-bit offsets

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

PGSIM_HOST_DEVICE inline char lower_ascii(char c) { return c >= 'A' && c <= 'Z' ? char(c + ('a' - 'A')) : c; }

// The CPU tokenizer's byte classes (chunk_parser.cpp).
enum ByteClass : uint8_t { kPlain, kSpace, kSemicolon, kControl };
PGSIM_HOST_DEVICE inline ByteClass byte_class(unsigned char c) {
  if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' || c == ',') return kSpace;
  if (c < 0x20 || c == 0x7f) return kControl;
  return c == ';' ? kSemicolon : kPlain;
}

// s[0, n) equals the lower-case word w (ASCII case ignored).
PGSIM_HOST_DEVICE inline bool iequals(const char* s, uint32_t n, const char* w) {
  uint32_t i = 0;
  for (; i < n && w[i]; ++i)
    if (lower_ascii(s[i]) != w[i]) return false;
  return i == n && !w[i];
}

PGSIM_HOST_DEVICE inline bool same_name(const char* a, uint32_t na, const char* b, uint32_t nb) {
  if (na != nb) return false;
  for (uint32_t i = 0; i < na; ++i)
    if (lower_ascii(a[i]) != lower_ascii(b[i])) return false;
  return true;
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
    if (iequals(first, len[0], ".end")) {
      f.status = kEnd;
      return f;
    }
    const char* ignored[] = {".op", ".options", ".option", ".title", ".dc", ".probe", ".plot",
                             ".save", ".temp", ".width", ".nodeset", ".ic", ".global"};
    for (const char* w : ignored)
      if (iequals(first, len[0], w)) {
        f.status = kSkip;
        return f;
      }
    f.kind = kOtherControl;
    return f;
  }
  const char letter = lower_ascii(first[0]);
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
  const bool plus_ground = (len[1] == 1 && plus[0] == '0') || iequals(plus, len[1], "gnd");
  const bool minus_ground = (len[2] == 1 && minus[0] == '0') || iequals(minus, len[2], "gnd");
  const double magnitude = value < 0 ? -value : value;
  const bool rejected = (kind == ElementKind::Resistor && value < 0) || magnitude > 1e30 ||
                        (magnitude != 0 && magnitude < 1e-30) ||
                        (kind == ElementKind::VoltageSource && value != 0 &&
                         (same_name(plus, len[1], minus, len[2]) || (plus_ground && minus_ground)));
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
