#include "parser/shown.hpp"

namespace pgsim {
namespace {

// The first kMaxShownChars bytes, backed off to a UTF-8 character boundary.
std::string_view head(std::string_view text) {
  size_t n = kMaxShownChars;
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return text.substr(0, n);
}

std::string cut(std::string_view text, const char* quote) {
  if (text.size() <= kMaxShownChars) return quote + std::string(text) + quote;
  return quote + std::string(head(text)) + "..." + quote + " (" + std::to_string(text.size()) + " characters)";
}

}  // namespace

std::string shown(std::string_view text) { return cut(text, "'"); }
std::string shown_plain(std::string_view text) { return cut(text, ""); }

}  // namespace pgsim
