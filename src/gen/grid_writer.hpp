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
  // > 0: a transient netlist to this stop time, shaped like IBM's ibmpg1t: each pad's source
  // behind a 1 nH package inductor, a 0.12 nF decap from each load's node to ground, each load a
  // PULSE to 50x its DC value (100 ps edges, 10 ps wide, period 3 ns, delays staggered over
  // 0-200 ps), `.tran 1e-11 STOP` and `.print tran` of the first 5 loads' nodes.
  double tran_stop = 0;
};

// What was written, for the summary line.
struct GridCounts {
  int64_t nodes = 0, resistors = 0, vias = 0, pads = 0, loads = 0, capacitors = 0, inductors = 0;
};

// Writes the whole netlist (both nets, vias, pads, loads, .op or .tran/.print, .end) to `out`.
GridCounts write_grid(const GridParams& params, TextSink& out);

}  // namespace pgsim::gen
