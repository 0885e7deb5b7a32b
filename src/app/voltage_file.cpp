#include "app/voltage_file.hpp"

#include <omp.h>

#include <charconv>
#include <cmath>
#include <sstream>

#include "app/output_file.hpp"
#include "app/reference_file.hpp"
#include "app/system_error.hpp"
#include "parser/input_error.hpp"
#include "parser/spice_value.hpp"

namespace pgsim {

namespace {

constexpr size_t kChunkLines = chunk_items_for(32);  // lines are about 32 bytes
constexpr int kDecimals = 12;  // 13 significant digits: well under a microvolt, more than any reference carries

// Appends the lines of names[first + k], values[first + k] for k in [begin, end).
void append_lines(const NameTable& names, const double* values, uint32_t first, size_t begin, size_t end, std::string& text) {
  char number[32];
  for (size_t k = begin; k < end; ++k) {
    const auto v = static_cast<uint32_t>(first + k);
    (text += names[v]) += ' ';
    text.append(number, std::to_chars(number, number + sizeof number, values[v], std::chars_format::scientific, kDecimals).ptr);
    text += '\n';
  }
}

// The bytes append_lines writes for a value, without formatting it: "d.<12 digits>e+dd" is 18
// bytes, one more with a sign; only a decimal exponent beyond +-99 (or inf, nan) needs to_chars.
size_t number_bytes(double value) {
  const double a = std::fabs(value);
  if (a == 0 || (a >= 1e-90 && a < 1e90)) return 18 + (std::signbit(value) ? 1 : 0);
  char number[32];
  return static_cast<size_t>(std::to_chars(number, number + sizeof number, value, std::chars_format::scientific, kDecimals).ptr - number);
}

}  // namespace

void format_voltage_lines(const NameTable& names, const double* values, uint32_t first, size_t count, const TextSink& sink) {
  write_in_parallel(count, kChunkLines, [&](size_t begin, size_t end, std::string& text) {
    append_lines(names, values, first, begin, end, text);
  }, sink);
}

uint64_t voltage_lines_bytes(const NameTable& names, const double* values, uint32_t first, size_t begin, size_t end) {
  uint64_t bytes = 2 * (end - begin);  // ' ' and '\n'
  // A whole rank's lines (the distributed writer) on all threads; a chunk's inside the writer's own loop.
#pragma omp parallel for schedule(static) reduction(+ : bytes) if (!omp_in_parallel() && end - begin > kChunkLines)
  for (size_t k = begin; k < end; ++k) {
    const auto v = static_cast<uint32_t>(first + k);
    bytes += names[v].size() + number_bytes(values[v]);
  }
  return bytes;
}

uint64_t format_voltage_lines_at(const NameTable& names, const double* values, uint32_t first, size_t count,
                                 uint64_t offset, const PositionedSink& sink) {
  return write_in_parallel_at(
      count, kChunkLines, [&](size_t begin, size_t end) { return voltage_lines_bytes(names, values, first, begin, end); },
      [&](size_t begin, size_t end, std::string& text) { append_lines(names, values, first, begin, end, text); }, offset,
      sink);
}

void write_voltages(OutputFile& out, const Netlist& netlist, const std::vector<double>& voltages) {
  // Ground (node 0) is not written. A regular file takes each thread's lines at their place; a
  // device, a FIFO or standard output takes them in order.
  const size_t lines = netlist.node_count() - 1;
  if (!out.temporary().empty())
    format_voltage_lines_at(netlist.node_names, voltages.data(), 1, lines, 0,
                            [&](uint64_t offset, std::string_view text) { out.write_at(offset, text); });
  else
    format_voltage_lines(netlist.node_names, voltages.data(), 1, lines, [&](std::string_view text) { out.write(text); });
}

void write_voltages(const std::string& path, const Netlist& netlist, const std::vector<double>& voltages) {
  OutputFile out(path);
  write_voltages(out, netlist, voltages);
  out.commit();
}

std::vector<NamedValue> read_voltages(const std::string& path) {
  std::ifstream in = open_reference_file(path, "voltage file");
  std::vector<NamedValue> values;
  std::string line;
  unsigned number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::istringstream fields(line);
    std::string name, value;
    if (!(fields >> name) || name[0] == '*') continue;
    if (!(fields >> value)) throw ParseError(path, number, "expected 'node value', got '" + line + "'");
    auto v = parse_spice_value(value);
    if (!v) throw ParseError(path, number, "'" + value + "' is not a finite number");
    values.push_back({std::move(name), *v});
  }
  if (in.bad()) throw SystemError("cannot read voltage file '" + path + "'");
  if (values.empty()) throw InputError(path + ": no 'node value' lines: not a voltage file?");
  return values;
}

}  // namespace pgsim
