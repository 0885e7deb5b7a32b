#include "app/export_system.hpp"

#include "app/atomic_file.hpp"
#include "mna/matrix_market.hpp"

namespace pgsim {

std::vector<std::string> export_paths(const std::string& prefix) {
  return {prefix + ".G.mtx", prefix + ".b.mtx", prefix + ".nodes.txt"};
}

void export_system(const std::string& prefix, const Netlist& netlist, const ReducedSystem& system) {
  const std::vector<std::string> paths = export_paths(prefix);
  AtomicFile matrix(paths[0]), rhs(paths[1]), nodes(paths[2]);
  write_matrix_market(system.G, [&](std::string_view text) { matrix.write(text); });
  write_matrix_market(system.b, [&](std::string_view text) { rhs.write(text); });
  std::string names;
  for (uint32_t node : system.node_of_unknown) {
    names += netlist.node_names[node];
    names += '\n';
    if (names.size() >= (1 << 20)) nodes.write(names), names.clear();
  }
  nodes.write(names);
  // Commit only when all three are complete, so a failure leaves no mismatched set.
  matrix.commit();
  rhs.commit();
  nodes.commit();
}

}  // namespace pgsim
