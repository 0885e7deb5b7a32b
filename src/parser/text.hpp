#pragma once
// ASCII case folding, shared by the netlist readers (node names and keywords match case-insensitively).
#include <cstddef>
#include <string_view>

namespace pgsim {

inline char lower(char c) { return c >= 'A' && c <= 'Z' ? char(c + ('a' - 'A')) : c; }

inline bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

}  // namespace pgsim
