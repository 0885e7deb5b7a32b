#pragma once
// Elements named like an earlier element (ASCII case ignored), found once the netlist is read.
//
// Why after the parse and not while interning (issue 13): element names are only ever read by id
// (messages), so they need no index while the text is parsed; a table of every element name,
// probed once per element, was a quarter of a one-thread parse and 34 bytes per node at its peak.
// Here the names are counted into shards by hash (one pass over the arena, then one over the
// hashes it kept, in parallel), and each shard, small enough to stay in a core's cache, is checked
// on one thread in element order.
#include <cstdint>
#include <vector>

#include "name_table.hpp"

namespace pgsim {

struct DuplicateName {
  uint32_t element;  // an element whose name an earlier one has
  uint32_t first;    // the first element of that name
};

// Every element after the first of its name, in element order; element i's name is names[i].
std::vector<DuplicateName> find_duplicate_names(const NameTable& names);

}  // namespace pgsim
