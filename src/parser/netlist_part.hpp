#pragma once
// A byte range of a netlist file parsed alone, for the distributed parse
// (dist/distributed_parse.hpp), which parses the file's line-aligned ranges on different
// processes and then makes of their results what a whole-file parse (netlist.hpp) gives.
//
// What a part cannot know is left open rather than guessed: its first line's number in the
// whole file (lines of the top file are counted from the range's start, 1 for its first line;
// lines of its includes are their own), the global ids of its nodes (its node table numbers
// the names it meets in their order of first appearance, with "0" at id 0 as a Netlist does),
// and whether the netlist ended before it. Warnings are not logged but returned in file order,
// and the first error is returned, not thrown, each with its place, so that the caller can
// give them the whole file's line numbers and apply the whole netlist's warning rules
// (WarningRules below, the same code as the whole-file parse's) before any is shown.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "duplicate_names.hpp"
#include "netlist.hpp"

namespace pgsim {

// A warning, before its text is made.
struct ParseWarning {
  enum class Kind : uint8_t { UnknownControl, DuplicateName } kind;
  SourceLocation where;  // the line warned about
  SourceLocation first;  // DuplicateName: the earlier element of that name
  std::string text;      // UnknownControl: the command as written; DuplicateName: the element's name
};

// The warning's message as the parse logs it; `files` names SourceLocation::file.
std::string warning_text(const ParseWarning& warning, const std::vector<std::string>& files);

// The rules that thin a netlist's warnings, applied in file order: an unknown control line is
// warned about once per command (ASCII case ignored), duplicate element names for the first
// kMaxDuplicateWarnings (chunk_parser.hpp) only, then one summary line at the end.
class WarningRules {
 public:
  // True the first time `command` is met.
  bool first_control(std::string_view command);
  // Counts one duplicate; true while it is among the first kMaxDuplicateWarnings.
  bool count_duplicate();
  // Counts `n` duplicates not warned about one by one.
  void add_duplicates(uint64_t n) { duplicates_ += n; }
  // Whether the next duplicate would be warned about.
  bool wants_duplicates() const;
  uint64_t duplicates() const { return duplicates_; }
  // The summary line for netlist `name`, when more duplicates were met than were listed.
  std::optional<std::string> summary(const std::string& name) const;

 private:
  std::unordered_set<std::string> controls_;
  uint64_t duplicates_ = 0;
};

// The first error of a part.
struct ParseFailure {
  bool located = false;  // false: an error of the whole part, with no line (what() of an InputError)
  SourceLocation where;  // located: where the serial parse would report it
  std::string message;   // located: without "file:line: "
};

struct NetlistPart {
  // Elements and names up to the first .end or error; Element::where lines of file 0 (the top
  // file) counted from the range's start. Both name tables have no index (names read by id).
  Netlist netlist;
  uint32_t lines = 0;     // physical lines of the top file read, complete when the part ended neither by .end nor by an error
  bool ended = false;     // an .end line of the top file was met
  std::vector<ParseWarning> warnings;  // file order, thinned by this part's own WarningRules
  uint64_t duplicates = 0;             // elements of the part whose name an earlier element of the part has
  std::optional<ParseFailure> error;
};

// Parses bytes [begin, end) of the regular, uncompressed file at `path` on omp_get_max_threads()
// threads: `begin` must be 0 or a line start that is not a '+' continuation, and `end` the
// file's size or another such line start (next_cut, chunk_parser.hpp). A part starting at 0
// starts the file (a byte-order mark is skipped). Throws InputError when the file cannot be
// opened; errors of its text (and of reading it or its includes) are returned in `error`.
NetlistPart parse_netlist_part(const std::string& path, uint64_t begin, uint64_t end, const ParseOptions& options = {});

// The part another reader made of a range (gpu/gpu_parse.hpp): its netlist (node names
// without an index), physical lines and .end, and its duplicate element names, which become the
// part's warnings and count as parse_netlist_part's do.
NetlistPart finish_netlist_part(Netlist netlist, uint32_t lines, bool ended, std::vector<DuplicateName> duplicates);

}  // namespace pgsim
