#pragma once
// --compare: the computed voltages against a reference file, matched by node name.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "app/voltage_file.hpp"
#include "parser/netlist.hpp"

namespace pgsim {

struct Comparison {
  int64_t matched = 0;
  int64_t missing_in_reference = 0;  // netlist nodes the reference lacks
  int64_t missing_in_result = 0;     // reference names the netlist lacks
  double max_abs_error = 0;
  double mean_abs_error = 0;
  std::vector<NamedValue> worst;     // node and signed error (computed - reference), worst first
  std::vector<std::string> missing_examples;  // a few missing names, either side
};

// A reference's names matched to netlist nodes, done right after the parse: then neither the
// reference's names nor the netlist's node-name index (NameTable::drop_index) outlive it.
struct MatchedReference {
  std::vector<std::pair<uint32_t, double>> values;  // node id and reference value, in reference order
  int64_t missing_in_result = 0;                    // reference names the netlist lacks
  std::vector<std::string> missing_examples;        // the first few of them
};

// Needs the node-name index (before drop_index).
MatchedReference match_reference(const Netlist& netlist, const std::vector<NamedValue>& reference);

// Reads node names by id only: the index may have been dropped.
Comparison compare_voltages(const Netlist& netlist, const std::vector<double>& voltages,
                            const MatchedReference& reference, size_t worst_count = 5);

}  // namespace pgsim
