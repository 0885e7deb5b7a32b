#pragma once
// The IBM .solution layout: one "name value" line per node.
#include <string>
#include <utility>
#include <vector>

#include "app/output_file.hpp"
#include "parser/netlist.hpp"

namespace pgsim {

// Writes every node but ground, in netlist order, into `out` (not committed: the caller commits
// it), the lines formatted on all threads: "name value", the value to_chars scientific with 12
// decimals.
void write_voltages(OutputFile& out, const Netlist& netlist, const std::vector<double>& voltages);
// The same into a new OutputFile at `path` (app/output_file.hpp), committed.
void write_voltages(const std::string& path, const Netlist& netlist, const std::vector<double>& voltages);

struct NamedValue {
  std::string name;
  double value;
};
// Reads a voltage file; throws ParseError (file:line) on a malformed line.
std::vector<NamedValue> read_voltages(const std::string& path);

}  // namespace pgsim
