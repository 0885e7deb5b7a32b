#pragma once
// Streams an IBM-style two-net power-grid netlist for a GridShape.
#include <cstdint>
#include <string>

#include "gen/grid.hpp"
#include "gen/text_sink.hpp"

namespace pgsim::gen {

struct GridParams {
  GridShape shape;
  uint64_t seed = 1;
  double load_fraction = 0.5;  // share of bottom-layer VDD taps that draw a load current
  std::string command_line;    // the command that reproduces the file, echoed into its header
};

// What was written, for the summary line.
struct GridCounts {
  int64_t nodes = 0, resistors = 0, vias = 0, pads = 0, loads = 0;
};

// Writes the whole netlist (both nets, vias, pads, loads, .op/.end) to `out`.
GridCounts write_grid(const GridParams& params, TextSink& out);

}  // namespace pgsim::gen
