#pragma once
// ReducedSystem::offset_of_node (8 B per netlist node) is read only when the voltages are
// written, and is +0.0 at all but the nodes tied by a voltage source to a node of another
// potential (the pads: 676 of the 5.0M nodes of a 5M-node pgsim-gen grid). Parked, only those
// entries are held through the chain elimination, the CMG build and the solve, where the host's
// memory peaks.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "parser/default_init.hpp"

namespace pgsim {

struct ParkedOffsets {
  size_t size = 0;               // the array's length
  std::vector<uint32_t> index;   // ascending: the entries whose bits are not +0.0's (-0.0 among them)
  std::vector<double> value;
};

// offsets' entries other than +0.0 moved into the result; offsets left empty (its memory freed).
ParkedOffsets park_offsets(FillVector<double>& offsets);

// offsets made again from parked, the same bits; parked left empty.
void restore_offsets(ParkedOffsets& parked, FillVector<double>& offsets);

}  // namespace pgsim
