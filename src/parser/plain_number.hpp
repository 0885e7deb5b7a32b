#pragma once
// A number written plainly, digits[.digits][e[+-]digits], read exactly by one multiplication or
// division: shared by the CPU parser's values (spice_value.cpp) and the GPU netlist reader
// (gpu/gpu_parse.cu), so that both read the same double. Compiles as host and device code.
#include <cstdint>

#include "host_device.hpp"

namespace pgsim {

// 10^0 .. 10^22: every one an exact double (5^22 < 2^53). A struct, so that a kernel can take the
// table as an argument (device code cannot index a host array).
struct PowersOfTen {
  double of[23];
};
inline constexpr PowersOfTen kPowersOfTen{{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12,
                                           1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}};

// The number at p when it is written plainly, digits[.digits][e[+-]digits] with at most 19 digits
// before the exponent and a power of ten (the exponent less the fraction's digits) of at most 22 in
// magnitude, such as "1.950737e-01": the digits are then an exact integer below 2^64, if at most 2^53
// an exact double, and so is the power of ten; one multiplication or division of the two is correctly
// rounded, the very double fast_float returns (its own first path for such numbers), with less
// work than fast_float's general entry takes to get there. Sets `value` and p past the number;
// false, with neither set, for any other text (fast_float reads it). `powers`: kPowersOfTen.
PGSIM_HOST_DEVICE inline bool read_plain_number(const char*& p, const char* last, const PowersOfTen& powers,
                                                double& value) {
  const auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
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
  value = power >= 0 ? m * powers.of[power] : m / powers.of[-power];
  if (negative) value = -value;
  p = q;
  return true;
}

}  // namespace pgsim
