#pragma once
// One rank's part of the netlist in a distributed run: what the distributed parse
// (dist/distributed_parse.hpp) gives each rank, and what the distributed reduction
// (dist/distributed_reduce.hpp) starts from. No rank holds the whole netlist.
//
// Byte ranges. The top file is cut into P line-aligned ranges in file order (a cut never falls
// before a '+' continuation line); rank r parses range r, and any .include whose line lies in
// it, entirely.
//
// Node ids are global and exactly a single-process parse's (parser/netlist.hpp): 0 is ground
// ("0" or "gnd"), every other node numbered by its first appearance in file order. Rank r owns
// one contiguous run of ids, [first_node, first_node + owned()), the runs in rank order covering
// every node but ground (the distributed parse gives each rank an equal share, whichever range
// saw the nodes first; a rank's elements may name nodes of any rank): it writes their voltages,
// and their unknowns are its rows. Ground belongs to no rank.
//
// Elements keep file order within the range; with the ranges in rank order they are the
// serial parse's elements, split. Where the range's reader left them on the rank's GPU for a
// reduction there (dist/elements_on_device.hpp), `elements` is empty and device_elements holds
// them, the same elements: element_count() and element() read either. Element names are kept
// per rank (a duplicate name in two ranges is not detected); element_name() reads them. Both
// name tables are read by id only (no hash index: find() and intern() are not allowed).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dist/elements_on_device.hpp"
#include "parser/default_init.hpp"
#include "parser/name_table.hpp"
#include "parser/netlist.hpp"

namespace pgsim::dist {

struct RankNetlist {
  int rank = 0, ranks = 1;
  uint32_t first_node = 1;   // global id of this rank's first owned node
  uint32_t total_nodes = 1;  // node ids of the whole netlist, ground included (a serial node_count())
  NameTable owned_names;     // owned node i (global id first_node + i) is named owned_names[i]
  FillVector<Element> elements;  // this range's elements, file order; plus/minus are global node ids
  std::shared_ptr<ElementsOnDevice> device_elements;  // or, where set, these hold them (elements empty)
  // Element k's name, element_name(k): element_names[k], or where a reader kept only the names a
  // DC run shows (ParseOptions::dc_names_only: the merging elements' and the duplicates'),
  // element_names[i] for k = named_elements[i] (names_thinned).
  NameTable element_names;
  FillVector<uint32_t> named_elements;
  bool names_thinned = false;
  std::vector<std::string> files;  // Element::where.file indexes this: the top file first, then this rank's includes
  uint64_t bytes_read = 0;         // of this rank's range and its includes, up to the netlist's .end
  std::vector<std::string> warnings;  // rank 0: the parse's warnings as logged, in file order (Netlist::warnings); others: none

  uint32_t owned() const { return owned_names.size(); }
  uint64_t element_count() const { return device_elements ? device_elements->count() : elements.size(); }
  // Element k < element_count() (from the device one at a time: for messages).
  Element element(uint64_t k) const { return device_elements ? device_elements->at(k) : elements[k]; }
  bool owns(uint32_t node) const { return node >= first_node && node - first_node < owned(); }
  std::string_view element_name(uint32_t k) const {
    return element_name_in(element_names, named_elements, names_thinned, k);
  }
  // "file:line", the line counted in the whole file (as a single-process parse reports it).
  std::string where(const SourceLocation& loc) const { return files[loc.file] + ":" + std::to_string(loc.line); }
};

}  // namespace pgsim::dist
