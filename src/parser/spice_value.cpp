#include "spice_value.hpp"

#include <fast_float/fast_float.h>

#include <cmath>
#include <cstdint>

#include "plain_number.hpp"
#include "text.hpp"

namespace pgsim {
namespace {

inline bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

double scale_of(std::string_view suffix) {
  if (suffix.size() >= 3 && lower(suffix[0]) == 'm' && lower(suffix[1]) == 'e' && lower(suffix[2]) == 'g')
    return 1e6;
  if (suffix.empty()) return 1.0;
  switch (lower(suffix[0])) {
    case 'f': return 1e-15;
    case 'p': return 1e-12;
    case 'n': return 1e-9;
    case 'u': return 1e-6;
    case 'm': return 1e-3;
    case 'k': return 1e3;
    case 'g': return 1e9;
    case 't': return 1e12;
    default: return 1.0;  // a unit letter such as V, A or ohm
  }
}

// True when the mantissa of the number [first, last) has a nonzero digit: a literal such as
// 1e-400 that reads as 0 underflowed, which pgsim rejects (as std::from_chars does) rather than
// taking as 0.
bool has_nonzero_digit(const char* first, const char* last) {
  for (; first != last && *first != 'e' && *first != 'E'; ++first)
    if (is_digit(*first) && *first != '0') return true;
  return false;
}

}  // namespace

std::optional<double> parse_spice_value(std::string_view text) {
  const char* first = text.data();
  const char* last = first + text.size();
  if (first != last && *first == '+') ++first;  // from_chars takes no leading '+'
  // from_chars accepts "nan" and "inf"; a SPICE value must start like a number.
  if (first == last || !(is_digit(*first) || *first == '-' || *first == '.')) return std::nullopt;
  double value = 0;
  const char* number_end = first;
  if (!read_plain_number(number_end, last, kPowersOfTen, value)) {
    // fast_float: correctly rounded (the same double as std::from_chars), several times faster.
    const auto result = fast_float::from_chars(first, last, value, fast_float::chars_format::general);
    if (result.ec != std::errc() || !std::isfinite(value)) return std::nullopt;
    if (value == 0 && has_nonzero_digit(first, result.ptr)) return std::nullopt;
    number_end = result.ptr;
  }
  std::string_view suffix(number_end, static_cast<size_t>(last - number_end));
  for (char c : suffix)
    if (!is_letter(c)) return std::nullopt;
  value *= scale_of(suffix);
  if (!std::isfinite(value)) return std::nullopt;
  return value;
}

}  // namespace pgsim
