#pragma once
#include <optional>
#include <string_view>

namespace pgsim {

// A SPICE number: a float, an optional scale suffix (f p n u m k meg g t, any case)
// and trailing unit letters that are ignored ("10kohm", "1.8V"). Returns nothing for
// text that is not such a number, or that is not finite (nan, inf, 1e999).
std::optional<double> parse_spice_value(std::string_view text);

}  // namespace pgsim
