#pragma once
// Arrays of doubles read again only after the solve, +0.0 at most entries, parked through the
// chain elimination, the CMG build and the solve, where the host's memory peaks: only their other
// entries are held.
// - ReducedSystem::offset_of_node (8 B per netlist node), read when the voltages are written:
//   +0.0 but at the nodes tied by a voltage source to a node of another potential (the pads: 676
//   of the 5.0M nodes of a 5M-node pgsim-gen grid).
// - ReducedSystem::b (8 B per unknown), read by the whole system's residual check after the
//   solve: +0.0 but at the unknowns with a load or beside a pad (1,510,528 of the 3,490,283 of
//   that grid).
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
ParkedOffsets park_offsets(std::vector<double>& offsets);

// offsets made again from parked, the same bits; parked left empty.
void restore_offsets(ParkedOffsets& parked, FillVector<double>& offsets);
void restore_offsets(ParkedOffsets& parked, std::vector<double>& offsets);

}  // namespace pgsim
