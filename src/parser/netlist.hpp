#pragma once
// The parsed netlist: element lists and the node-name table.
#include <cstdint>
#include <string>
#include <vector>

#include "default_init.hpp"
#include "duplicate_names.hpp"
#include "host_device.hpp"
#include "name_table.hpp"
#include "waveform.hpp"

namespace pgsim {

enum class ElementKind : uint8_t { Resistor, VoltageSource, CurrentSource, Capacitor, Inductor };

char element_letter(ElementKind kind);

// Whether an element merges its ends into one super-node in a DC solve of a netlist without
// inductors (mna/reduce.hpp's merging_elements()): a voltage source or a 0-ohm resistor. On the
// device too: the GPU reader keeps those elements' names (ParseOptions::dc_names_only).
PGSIM_HOST_DEVICE constexpr bool merges_at_dc(ElementKind kind, double value) {
  return kind == ElementKind::VoltageSource || (kind == ElementKind::Resistor && value == 0.0);
}
// The conductance a resistor stamps between its ends (0: none, a short or an open). On the device
// too: the distributed stamp on a rank's GPU (gpu/device_stamp.hpp) computes reduce()'s values.
PGSIM_HOST_DEVICE inline double resistor_conductance(double ohms) { return ohms > 0 ? 1.0 / ohms : 0.0; }

// Element k's name where `names` holds every element's name (thinned false), or only those of
// the elements listed, ascending, in `named` (thinned: k must be listed). Netlist::element_name()
// and dist::RankNetlist's read their names through it.
std::string_view element_name_in(const NameTable& names, const FillVector<uint32_t>& named, bool thinned, uint32_t k);

// Where an element was written, for messages. Trivial (no default member values), so that the
// parser's resize of Netlist::elements leaves them unwritten until it fills them.
struct SourceLocation {
  uint32_t file;  // index into Netlist::files (below kMaxFiles)
  uint32_t line;
};

// Element k's name is Netlist::element_names[k] (element names are not interned: one each). 24
// bytes, the netlist's largest array (85M elements at 50M nodes): the file index is 16 bits (the
// parser refuses more files) beside the kind, where a SourceLocation and a name id made it 32.
struct Element {
  uint32_t plus;   // node ids; 0 is ground
  uint32_t minus;
  double value;    // ohms, volts or amperes (farads/henries are kept but unused at DC)
  uint32_t line;   // where(): where it was written
  uint16_t file;
  ElementKind kind;

  SourceLocation where() const { return {file, line}; }
};
static_assert(sizeof(Element) == 24, "Element: the netlist's largest array, packed");

struct Netlist {
  static constexpr uint32_t ground = 0;
  // Files a netlist may read, the top one and its includes (Element::file is 16 bits).
  static constexpr size_t kMaxFiles = size_t(1) << 16;

  NameTable node_names;     // id 0 is ground ("0"); "gnd" maps to it too
  // Element k's name is element_names[k]; once keep_element_names() has thinned them, element
  // named_elements[i]'s is element_names[i]. element_name() reads either.
  NameTable element_names;
  FillVector<uint32_t> named_elements;  // ascending; empty until thinned
  bool names_thinned = false;
  FillVector<Element> elements;
  std::vector<std::string> files;  // the top file first, then every .include
  std::vector<std::string> warnings;  // as logged while parsing, in file order
  TransientInputs transient;          // source waveforms, .tran, .print (parser/waveform.hpp)
  uint64_t bytes_read = 0;            // of every file, up to its .end

  Netlist();
  uint32_t node_count() const { return node_names.size(); }
  std::string where(const SourceLocation& loc) const;  // "file:line"
  // Element k's name: k must be named (every element is until keep_element_names()).
  std::string_view element_name(uint32_t k) const;
  // Frees every element name but those of the elements in `keep` (ascending element indices, each
  // named), which element_name() reads from then on: the names are the netlist's second largest
  // part (about 29 B per node at 50M nodes), held through reduce() only for its messages.
  void keep_element_names(FillVector<uint32_t> keep);
};

struct ParseOptions {
  // Called now and then with (bytes read so far, total bytes of the top file); may be empty.
  void (*progress)(uint64_t done, uint64_t total, void* user) = nullptr;
  void* progress_user = nullptr;
  // Set by a caller that will ask element_name() only of the elements that merges_at_dc() and of
  // those named like an earlier element (the duplicates' warnings): a reader may then keep those
  // names alone (names_thinned, as keep_element_names() leaves a netlist), where copying the rest
  // costs time. The GPU reader does (it reads only DC netlists); the CPU parser keeps every name.
  bool dc_names_only = false;
  // Text is read in blocks of block_bytes and parsed in chunks of about chunk_bytes on all threads
  // (0: the defaults, 256 KB chunks and blocks of 8 chunks per thread, the next block read while one is parsed). Any sizes give the same
  // Netlist, warnings and errors; tests set them tiny to put boundaries everywhere.
  size_t block_bytes = 0;
  size_t chunk_bytes = 0;
};

// What ends every parse of a whole netlist, for one read by another reader (gpu/gpu_parse.hpp):
// its duplicate element names (parser/duplicate_names.hpp: every element named like an earlier
// one, in element order, as find_duplicate_names() lists them) warned of as parse_netlist() warns
// (the first few, then a summary), and an InputError for a netlist without elements. `name`: what
// messages call the netlist.
void finish_netlist(Netlist& netlist, const std::string& name, std::vector<DuplicateName> duplicates);

// Reads a SPICE netlist (DESIGN.md section 1) on omp_get_max_threads() threads; the result does not
// depend on the thread count. Warnings are logged (spdlog) and kept in Netlist::warnings. Throws
// ParseError (file:line) for the first error in file order, or InputError.
Netlist parse_netlist(const std::string& path, const ParseOptions& options = {});
// The same, from text in memory; `name` is what messages call it and where includes are resolved from.
Netlist parse_netlist_text(const std::string& text, const std::string& name, const ParseOptions& options = {});

}  // namespace pgsim
