#include "app/voltage_file.hpp"

#include <charconv>
#include <sstream>

#include "app/output_file.hpp"
#include "app/reference_file.hpp"
#include "app/system_error.hpp"
#include "parser/input_error.hpp"
#include "parser/spice_value.hpp"

namespace pgsim {

void format_voltage_lines(const NameTable& names, const double* values, uint32_t first, size_t count, const TextSink& sink) {
  // Lines are about 32 bytes.
  write_in_parallel(count, chunk_items_for(32), [&](size_t begin, size_t end, std::string& text) {
    char number[32];
    for (size_t k = begin; k < end; ++k) {
      const auto v = static_cast<uint32_t>(first + k);
      (text += names[v]) += ' ';
      // 13 significant digits: well under a microvolt, and more than any reference carries.
      text.append(number, std::to_chars(number, number + sizeof number, values[v], std::chars_format::scientific, 12).ptr);
      text += '\n';
    }
  }, sink);
}

void write_voltages(OutputFile& out, const Netlist& netlist, const std::vector<double>& voltages) {
  // Ground (node 0) is not written.
  format_voltage_lines(netlist.node_names, voltages.data(), 1, netlist.node_count() - 1,
                       [&](std::string_view text) { out.write(text); });
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
