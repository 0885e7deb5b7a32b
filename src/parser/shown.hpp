#pragma once
// How user text (a token, a node name) appears in messages and tables: whole up to 60 bytes,
// else cut, so a 2 MB node name costs a line, not 2 MB of terminal.
#include <cstddef>
#include <string>
#include <string_view>

namespace pgsim {

constexpr size_t kMaxShownChars = 60;

// Quoted, for messages: 'text', or 'first 60 bytes...' (N characters).
std::string shown(std::string_view text);
// Unquoted, for table cells: text, or first 60 bytes... (N characters); at most 90 bytes.
std::string shown_plain(std::string_view text);

}  // namespace pgsim
