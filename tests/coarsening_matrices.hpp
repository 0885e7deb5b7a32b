#pragma once
// The SDD matrices the device's CMG coarsening and hierarchy build are checked on against the
// host's (tests/test_gpu_cmg_coarsen.cpp, tests/test_gpu_cmg_build.cpp), named.
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gpu_test_util.hpp"
#include "grid_system.hpp"
#include "mna/chain_elimination.hpp"
#include "mna/csr.hpp"
#include "mna/reduce.hpp"
#include "parser/netlist.hpp"
#include "test_util.hpp"

namespace pgsim::test {

inline GridSystem square_grid(int32_t side, int32_t via_stride, uint32_t seed = 1) {
  GridShape shape;
  shape.nx = shape.ny = side;
  shape.via_stride = via_stride;
  shape.seed = seed;
  return make_grid_system(shape);
}

// Grids with wire chains eliminated (a long ground row), a grid with a via at every crossing
// (not eliminated), random conductances with pads every 2nd node, ties everywhere with a hub of
// 6000 spokes, and ibmpg1 as reduced and with its chains eliminated.
inline std::vector<std::pair<std::string, CsrMatrix>> coarsening_matrices() {
  std::vector<std::pair<std::string, CsrMatrix>> m;
  for (auto [side, via] : {std::pair{120, 4}, std::pair{370, 3}}) {
    const GridSystem sys = square_grid(side, via);
    m.emplace_back("grid of side " + std::to_string(side) + ", via stride " + std::to_string(via) + ", chains eliminated",
                   eliminate_chains(sys.G, sys.b).G);
  }
  m.emplace_back("a grid with a via at every crossing", square_grid(224, 1, 7).G);
  std::mt19937 rng(3);
  m.emplace_back("random conductances and pads every 2nd node", grid_sdd(150, 130, 2, rng));
  m.emplace_back("ties everywhere and a hub of 6000 spokes", tied_lattice(160, 0.5, 6000));
  const ReducedSystem sys = reduce(parse_netlist(shared_data("ibmpg1.spice")));
  m.emplace_back("ibmpg1", sys.G);
  m.emplace_back("ibmpg1, chains eliminated", eliminate_chains(sys.G, sys.b).G);
  return m;
}

}  // namespace pgsim::test
