#pragma once
// The differential fuzz of the plain grammar (parser/plain_line.hpp) against the CPU parser, on
// the CPU (tests/test_plain_line.cpp, line by line) and on the GPU (tests/test_gpu_parse.cpp, whole
// netlists): the same random edits of plain text.
#include <random>
#include <string>

namespace pgsim::test {

// Replaces, inserts or deletes 1 to 3 bytes of `text` at random, each new byte one that matters to
// the grammar (separators, comment and continuation marks, number and name characters, element
// letters, '=', unit suffixes, control and high bytes), '\n' among them where `newlines`.
inline void mutate_plain_text(std::string& text, std::mt19937& rng, bool newlines) {
  static const std::string kBytes = " \t\r,;$*+.-eE0123456789RrVvIiCcgndGND=kKmM\x01\x7f\x80";
  const std::string alphabet = newlines ? kBytes + "\n" : kBytes;
  std::uniform_int_distribution<int> pick(0, 1 << 20);
  for (int edits = 1 + pick(rng) % 3; edits > 0; --edits) {
    const size_t at = size_t(pick(rng)) % (text.size() + 1);
    const char c = alphabet[size_t(pick(rng)) % alphabet.size()];
    switch (pick(rng) % 3) {
      case 0: if (at < text.size()) text[at] = c; break;
      case 1: text.insert(at, 1, c); break;
      default: if (at < text.size()) text.erase(at, 1);
    }
  }
}

}  // namespace pgsim::test
