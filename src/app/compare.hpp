#pragma once
// --compare: the computed voltages against a reference file, matched by node name.
#include <string>
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

Comparison compare_voltages(const Netlist& netlist, const std::vector<double>& voltages,
                            const std::vector<NamedValue>& reference, size_t worst_count = 5);

}  // namespace pgsim
