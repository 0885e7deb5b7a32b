#pragma once
// The parsed netlist: element lists and the node-name table.
#include <cstdint>
#include <string>
#include <vector>

#include "name_table.hpp"

namespace pgsim {

enum class ElementKind : uint8_t { Resistor, VoltageSource, CurrentSource, Capacitor, Inductor };

char element_letter(ElementKind kind);

// Where an element was written, for messages.
struct SourceLocation {
  uint32_t file = 0;  // index into Netlist::files
  uint32_t line = 0;
};

struct Element {
  ElementKind kind;
  uint32_t name;   // id in Netlist::element_names
  uint32_t plus;   // node ids; 0 is ground
  uint32_t minus;
  double value;    // ohms, volts or amperes (farads/henries are kept but unused at DC)
  SourceLocation where;
};

struct Netlist {
  static constexpr uint32_t ground = 0;

  NameTable node_names;     // id 0 is ground ("0"); "gnd" maps to it too
  NameTable element_names;
  std::vector<Element> elements;
  std::vector<std::string> files;  // the top file first, then every .include
  uint64_t bytes_read = 0;

  Netlist();
  uint32_t node_count() const { return node_names.size(); }
  std::string where(const SourceLocation& loc) const;  // "file:line"
};

struct ParseOptions {
  // Called now and then with (bytes read so far, total bytes of the top file); may be empty.
  void (*progress)(uint64_t done, uint64_t total, void* user) = nullptr;
  void* progress_user = nullptr;
};

// Reads a SPICE netlist (DESIGN.md section 1). Throws ParseError (file:line) or InputError.
Netlist parse_netlist(const std::string& path, const ParseOptions& options = {});
// The same, from text in memory; `name` is what messages call it and where includes are resolved from.
Netlist parse_netlist_text(const std::string& text, const std::string& name, const ParseOptions& options = {});

}  // namespace pgsim
