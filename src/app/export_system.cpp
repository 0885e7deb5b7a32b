#include "app/export_system.hpp"

#include "app/output_file.hpp"
#include "mna/matrix_market.hpp"

namespace pgsim {

std::vector<std::string> export_paths(const std::string& prefix) {
  return {prefix + ".G.mtx", prefix + ".b.mtx", prefix + ".nodes.txt"};
}

void export_system(const std::string& prefix, const Netlist& netlist, const ReducedSystem& system) {
  const std::vector<std::string> paths = export_paths(prefix);
  OutputFile matrix(paths[0]), rhs(paths[1]), nodes(paths[2]);
  write_matrix_market(system.G, [&](std::string_view text) { matrix.write(text); });
  write_matrix_market(system.b, [&](std::string_view text) { rhs.write(text); });
  write_in_parallel(system.node_of_unknown.size(), chunk_items_for(16), [&](size_t begin, size_t end, std::string& out) {
    for (size_t k = begin; k < end; ++k) (out += netlist.node_names[system.node_of_unknown[k]]) += '\n';
  }, [&](std::string_view text) { nodes.write(text); });
  // Commit only when all three are complete, so a failure leaves no mismatched set.
  matrix.commit();
  rhs.commit();
  nodes.commit();
}

}  // namespace pgsim
