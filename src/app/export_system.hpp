#pragma once
// --export-system PREFIX (issue 9): the reduced system exactly as reduce() produced it, for
// other solvers: PREFIX.G.mtx (G, MatrixMarket symmetric, lower triangle), PREFIX.b.mtx (b,
// MatrixMarket array) and PREFIX.nodes.txt (line k names the node whose voltage unknown k is).
#include <string>
#include <vector>

#include "mna/reduce.hpp"
#include "parser/netlist.hpp"

namespace pgsim {

// The three files, in the order above.
std::vector<std::string> export_paths(const std::string& prefix);

// Writes them, each through OutputFile (atomically where a regular file); throws SystemError.
void export_system(const std::string& prefix, const Netlist& netlist, const ReducedSystem& system);

}  // namespace pgsim
