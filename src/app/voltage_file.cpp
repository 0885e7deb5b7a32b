#include "app/voltage_file.hpp"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "app/atomic_file.hpp"
#include "app/system_error.hpp"
#include "parser/input_error.hpp"
#include "parser/spice_value.hpp"

namespace pgsim {

void write_voltages(const std::string& path, const Netlist& netlist, const std::vector<double>& voltages) {
  AtomicFile out(path);
  std::string buffer;
  buffer.reserve(1 << 20);
  char number[64];
  for (uint32_t v = 1; v < netlist.node_count(); ++v) {
    buffer += netlist.node_names[v];
    buffer += ' ';
    // 13 significant digits: well under a microvolt, and more than any reference carries.
    auto [end, ec] = std::to_chars(number, number + sizeof number, voltages[v], std::chars_format::scientific, 12);
    buffer.append(number, end);
    buffer += '\n';
    if (buffer.size() > (1 << 20) - 256) {
      out.write(buffer);
      buffer.clear();
    }
  }
  out.write(buffer);
  out.commit();
}

std::vector<NamedValue> read_voltages(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError("cannot read voltage file '" + path + "': it is a directory");
  errno = 0;
  std::ifstream in(path);
  if (!in)
    throw InputError("cannot open voltage file '" + path + "': " + (errno ? std::strerror(errno) : "not readable"));
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
