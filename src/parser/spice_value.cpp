#include "spice_value.hpp"

#include <charconv>
#include <cctype>
#include <cmath>

namespace pgsim {
namespace {

inline char lower(char c) { return c >= 'A' && c <= 'Z' ? char(c + ('a' - 'A')) : c; }
inline bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

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

inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The common shape "[-]digits[.digits][e[+-]digits]" with at most 19 significant digits whose
// value is exact in a double, scaled by a power of ten that is exact too (Clinger's fast path:
// one correctly rounded multiply or divide, so the result equals from_chars'). Returns false
// for anything else, which the caller hands to from_chars. Sets `end` past the number.
bool parse_simple_number(const char* p, const char* last, double& value, const char*& end) {
  static constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                      1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  const bool negative = p != last && *p == '-';
  if (negative) ++p;
  uint64_t mantissa = 0;
  int digits = 0, exponent = 0;
  bool any_digit = false;
  for (; p != last && is_digit(*p); ++p, any_digit = true) {
    if (mantissa == 0 && *p == '0') continue;  // leading zeros are not significant
    if (++digits > 19) return false;
    mantissa = mantissa * 10 + uint64_t(*p - '0');
  }
  if (p != last && *p == '.') {
    for (++p; p != last && is_digit(*p); ++p, any_digit = true) {
      --exponent;
      if (mantissa == 0 && *p == '0') continue;
      if (++digits > 19) return false;
      mantissa = mantissa * 10 + uint64_t(*p - '0');
    }
  }
  if (!any_digit) return false;
  if (p != last && (*p == 'e' || *p == 'E')) {
    const char* q = p + 1;
    bool exp_negative = false;
    if (q != last && (*q == '+' || *q == '-')) exp_negative = *q++ == '-';
    if (q == last || !is_digit(*q)) return false;  // "1e" or "1e+": from_chars decides
    int e = 0;
    for (; q != last && is_digit(*q); ++q) {
      if (e > 1000) return false;
      e = e * 10 + (*q - '0');
    }
    exponent += exp_negative ? -e : e;
    p = q;
  }
  if (mantissa > (uint64_t(1) << 53) || exponent < -22 || exponent > 22) return false;
  double m = static_cast<double>(mantissa);
  m = exponent < 0 ? m / kPow10[-exponent] : m * kPow10[exponent];
  value = negative ? -m : m;
  end = p;
  return true;
}

}  // namespace

std::optional<double> parse_spice_value(std::string_view text) {
  const char* first = text.data();
  const char* last = first + text.size();
  if (first != last && *first == '+') ++first;  // from_chars takes no leading '+'
  // from_chars accepts "nan" and "inf"; a SPICE value must start like a number.
  if (first == last || !(std::isdigit(static_cast<unsigned char>(*first)) || *first == '-' || *first == '.'))
    return std::nullopt;
  double value = 0;
  const char* end = nullptr;
  if (!parse_simple_number(first, last, value, end)) {
    auto result = std::from_chars(first, last, value, std::chars_format::general);
    if (result.ec != std::errc() || !std::isfinite(value)) return std::nullopt;
    end = result.ptr;
  }
  std::string_view suffix(end, static_cast<size_t>(last - end));
  for (char c : suffix)
    if (!is_letter(c)) return std::nullopt;
  value *= scale_of(suffix);
  if (!std::isfinite(value)) return std::nullopt;
  return value;
}

}  // namespace pgsim
