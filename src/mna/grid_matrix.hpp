#pragma once
// A synthetic power-grid system for tests and benchmarks that must reach millions of unknowns
// without a netlist: an nx-by-ny resistor mesh (random segment conductances in [0.5, 2] S) with a
// pad of 10 S to the supply at every pitch-th node in both directions. The matrix is the reduced
// SDD system of that mesh, rows in row-major (natural) order.
#include <cstdint>

#include "mna/csr.hpp"

namespace pgsim {

CsrMatrix grid_matrix(int32_t nx, int32_t ny, uint32_t seed, int32_t pad_pitch = 32);

}  // namespace pgsim
