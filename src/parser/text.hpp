#pragma once
// ASCII case folding, shared by the netlist readers (node names and keywords match case-insensitively).
// Host and device code: the GPU netlist reader (parser/plain_line.hpp) folds case as the CPU does.
#include <cstddef>
#include <string_view>

#include "host_device.hpp"

namespace pgsim {

PGSIM_HOST_DEVICE constexpr char lower(char c) { return c >= 'A' && c <= 'Z' ? char(c + ('a' - 'A')) : c; }

// a[0, na) and b[0, nb) are the same text, ASCII case ignored.
PGSIM_HOST_DEVICE inline bool iequals(const char* a, size_t na, const char* b, size_t nb) {
  if (na != nb) return false;
  for (size_t i = 0; i < na; ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

inline bool iequals(std::string_view a, std::string_view b) { return iequals(a.data(), a.size(), b.data(), b.size()); }

}  // namespace pgsim
