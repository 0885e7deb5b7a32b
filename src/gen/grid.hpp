#pragma once
// The geometry of a generated IBM-style power grid, as pure index arithmetic so the
// writer can stream any size in constant memory.
//
// Coordinates are integer tracks on a W x H die. Metal layer l (1 = bottom) has stripes
// every 2^l tracks, horizontal on odd layers and vertical on even ones; the GND net's
// stripes sit half a bottom pitch beside the VDD net's, so both nets share the die without
// sharing a coordinate. A node lies wherever a stripe crosses a stripe of the layer below
// (bottom layer: every second track, the load taps), so a stripe on layer l+2 always
// crosses the same stripes as layer l and every via lands on an existing node.
#include <cstdint>

namespace pgsim::gen {

enum class Net { vdd, gnd };

// An arithmetic run of coordinates: first, first + step, ..., count of them.
struct Sequence {
  int64_t first = 0, step = 1, count = 0;
  int64_t at(int64_t i) const { return first + i * step; }
  // Whether coordinate c is one of the run's values.
  bool contains(int64_t c) const { return c >= first && (c - first) % step == 0 && (c - first) / step < count; }
};

struct GridShape {
  int layers = 4;
  int64_t width = 0, height = 0;  // tracks
  int pads_every = 6;             // pads on every K-th top stripe, as far apart along it: a square lattice

  static int64_t pitch(int layer) { return int64_t{1} << layer; }
  static bool horizontal(int layer) { return layer % 2 == 1; }

  // Where the net's stripes of `layer` lie (y for horizontal layers, x for vertical ones).
  Sequence stripes(Net net, int layer) const;
  // Where the nodes lie along one stripe of `layer` (x for horizontal layers, y for vertical).
  Sequence positions(Net net, int layer) const;
  // Which top-layer stripes of the net, and which nodes along each, carry pads: every
  // pads_every-th stripe and nodes the same distance apart, the lattice centred on the die.
  Sequence pad_stripes(Net net) const;
  Sequence pad_nodes(Net net) const;
  // Nodes of one net on one layer, and pad nodes (the _X_ side of each pad) of one net.
  int64_t layer_nodes(Net net, int layer) const;
  int64_t pads(Net net) const;
  // Every node of the netlist (both nets, all layers, pad nodes; ground excluded).
  int64_t total_nodes() const;
};

// The smallest near-square shape with at least `nodes` nodes.
GridShape shape_for_nodes(int64_t nodes, int layers, int pads_every);

}  // namespace pgsim::gen
