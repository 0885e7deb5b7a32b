#include "spice_value.hpp"

#include <fast_float/fast_float.h>

#include <cmath>
#include <cstdint>

namespace pgsim {
namespace {

inline char lower(char c) { return c >= 'A' && c <= 'Z' ? char(c + ('a' - 'A')) : c; }
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

// The number at p when it is written plainly, digits[.digits][e[+-]digits] with at most 19 digits
// before the exponent and a power of ten (the exponent less the fraction's digits) of at most 22 in
// magnitude, such as "1.950737e-01": the digits are then an exact integer below 2^64, if at most 2^53
// an exact double, and so is the power of ten; one multiplication or division of the two is correctly
// rounded, the very double fast_float returns (its own first path for such numbers), with less
// work than fast_float's general entry takes to get there. Sets `value` and p past the number;
// false, with neither set, for any other text (fast_float reads it).
bool read_plain_number(const char*& p, const char* last, double& value) {
  static constexpr double kPowers[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                       1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  const char* q = p;
  const bool negative = q != last && *q == '-';
  q += negative;
  uint64_t digits = 0;  // wraps past 19 digits, which are then refused
  int count = 0, power = 0;
  const auto read_digits = [&] {
    const char* start = q;
    for (; q != last && is_digit(*q); ++q) digits = digits * 10 + static_cast<uint64_t>(*q - '0');
    count += static_cast<int>(q - start);
    return static_cast<int>(q - start);
  };
  if (read_digits() == 0) return false;
  if (q != last && *q == '.') {
    ++q;
    const int fraction = read_digits();
    if (fraction == 0) return false;
    power -= fraction;
  }
  if (count > 19 || digits > (uint64_t(1) << 53)) return false;
  if (q != last && (*q == 'e' || *q == 'E')) {
    ++q;
    const bool negative_exponent = q != last && *q == '-';
    if (q != last && (*q == '-' || *q == '+')) ++q;
    if (q == last || !is_digit(*q)) return false;
    int exponent = 0;
    for (; q != last && is_digit(*q); ++q) {
      if (exponent > 1000) return false;  // far outside the range either way; no int overflow
      exponent = exponent * 10 + (*q - '0');
    }
    power += negative_exponent ? -exponent : exponent;
  }
  if (power < -22 || power > 22) return false;
  const auto m = static_cast<double>(digits);
  value = power >= 0 ? m * kPowers[power] : m / kPowers[-power];
  if (negative) value = -value;
  p = q;
  return true;
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
  if (!read_plain_number(number_end, last, value)) {
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
