#pragma once
// The IBM .solution layout: one "name value" line per node.
#include <string>
#include <utility>
#include <vector>

#include "app/output_file.hpp"
#include "mna/parallel_text.hpp"
#include "parser/netlist.hpp"

namespace pgsim {

// The lines of a voltages file, one per node: "name value", the value to_chars scientific with 12
// decimals. Lines of names[first + k] and values[first + k], k in [0, count), formatted on all
// threads and handed to `sink` in order (write_voltages; the distributed writer,
// app/distributed_voltages.hpp, a rank's owned nodes).
void format_voltage_lines(const NameTable& names, const double* values, uint32_t first, size_t count, const TextSink& sink);
// The bytes of lines [begin, end) of format_voltage_lines(names, values, first, ...), counted
// without formatting them.
uint64_t voltage_lines_bytes(const NameTable& names, const double* values, uint32_t first, size_t begin, size_t end);
// The same lines, each run of them handed to `sink` at its offset in a text whose first line is
// at `offset`, from all threads at once (write_in_parallel_at); returns their bytes.
uint64_t format_voltage_lines_at(const NameTable& names, const double* values, uint32_t first, size_t count,
                                 uint64_t offset, const PositionedSink& sink);

// Writes every node but ground, in netlist order, into `out` (not committed: the caller commits
// it), by format_voltage_lines.
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
