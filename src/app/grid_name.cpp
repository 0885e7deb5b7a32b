#include "app/grid_name.hpp"

#include <limits>

namespace pgsim {
namespace {

// Parses [-]digits at s[i..]; advances i. Refuses empty digit runs and values that overflow.
std::optional<int64_t> parse_integer(std::string_view s, size_t& i, bool allow_sign) {
  bool negative = false;
  if (allow_sign && i < s.size() && s[i] == '-') {
    negative = true;
    ++i;
  }
  const size_t first = i;
  int64_t v = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
    if (v > (std::numeric_limits<int64_t>::max() - 9) / 10) return std::nullopt;
    v = v * 10 + (s[i] - '0');
  }
  if (i == first) return std::nullopt;
  return negative ? -v : v;
}

// n<digits>_ at the start of the name: the layer and the index after the underscore.
std::optional<int> parse_layer(std::string_view name, size_t& i) {
  if (name.empty() || (name[0] != 'n' && name[0] != 'N')) return std::nullopt;
  i = 1;
  auto layer = parse_integer(name, i, false);
  if (!layer || *layer >= std::numeric_limits<int>::max() || i >= name.size() || name[i] != '_') return std::nullopt;
  ++i;
  return static_cast<int>(*layer);
}

}  // namespace

std::optional<int> layer_of_name(std::string_view name) {
  size_t i = 0;
  return parse_layer(name, i);
}

std::optional<GridPosition> grid_position(std::string_view name) {
  size_t i = 0;
  auto layer = parse_layer(name, i);
  if (!layer) return std::nullopt;
  auto x = parse_integer(name, i, true);
  if (!x || i >= name.size() || name[i] != '_') return std::nullopt;
  ++i;
  auto y = parse_integer(name, i, true);
  if (!y || i != name.size()) return std::nullopt;
  return GridPosition{*layer, *x, *y};
}

}  // namespace pgsim
