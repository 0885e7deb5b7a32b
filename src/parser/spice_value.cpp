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

}  // namespace

std::optional<double> parse_spice_value(std::string_view text) {
  const char* first = text.data();
  const char* last = first + text.size();
  if (first != last && *first == '+') ++first;  // from_chars takes no leading '+'
  // from_chars accepts "nan" and "inf"; a SPICE value must start like a number.
  if (first == last || !(std::isdigit(static_cast<unsigned char>(*first)) || *first == '-' || *first == '.'))
    return std::nullopt;
  double value = 0;
  auto [end, ec] = std::from_chars(first, last, value, std::chars_format::general);
  if (ec != std::errc() || !std::isfinite(value)) return std::nullopt;
  std::string_view suffix(end, static_cast<size_t>(last - end));
  for (char c : suffix)
    if (!is_letter(c)) return std::nullopt;
  value *= scale_of(suffix);
  if (!std::isfinite(value)) return std::nullopt;
  return value;
}

}  // namespace pgsim
