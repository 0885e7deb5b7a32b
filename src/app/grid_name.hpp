#pragma once
// IBM-style node names, n<layer>_<x>_<y>: the metal layer and the position on the die.
#include <cstdint>
#include <optional>
#include <string_view>

namespace pgsim {

struct GridPosition {
  int layer = 0;
  int64_t x = 0, y = 0;
};

// The layer of a name that starts with n<digits>_ (either case), or nullopt.
std::optional<int> layer_of_name(std::string_view name);
// Layer and position of a name of exactly the form n<layer>_<x>_<y> (x, y may be negative), or nullopt.
std::optional<GridPosition> grid_position(std::string_view name);

}  // namespace pgsim
