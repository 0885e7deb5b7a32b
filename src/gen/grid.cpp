#include "gen/grid.hpp"

#include <initializer_list>

namespace pgsim::gen {
namespace {

// Sequence of first + k*step below `limit`.
Sequence below(int64_t first, int64_t step, int64_t limit) {
  return {first, step, first < limit ? (limit - 1 - first) / step + 1 : 0};
}

// GND stripes are offset by half the finest pitch of their direction (layer 1 or 2).
int64_t offset(Net net, bool horizontal) {
  if (net == Net::vdd) return 0;
  return GridShape::pitch(horizontal ? 1 : 2) / 2;
}

// Every step-th of `count` indices, the unused remainder split between both ends.
Sequence centred_every(int64_t count, int64_t step) {
  if (count <= 0) return {};
  int64_t first = (count - 1) % step / 2;
  return {first, step, (count - 1 - first) / step + 1};
}

}  // namespace

Sequence GridShape::stripes(Net net, int layer) const {
  bool h = horizontal(layer);
  return below(offset(net, h), pitch(layer), h ? height : width);
}

Sequence GridShape::positions(Net net, int layer) const {
  bool h = horizontal(layer);
  int64_t extent = h ? width : height;
  // Bottom layer: a tap every second track (both nets' vertical stripes fall on even tracks).
  if (layer == 1) return below(0, 2, extent);
  return below(offset(net, !h), pitch(layer - 1), extent);
}

int64_t GridShape::layer_nodes(Net net, int layer) const {
  return stripes(net, layer).count * positions(net, layer).count;
}

Sequence GridShape::pad_stripes(Net net) const { return centred_every(stripes(net, layers).count, pads_every); }

Sequence GridShape::pad_nodes(Net net) const {
  Sequence along = positions(net, layers);
  return centred_every(along.count, pads_every * pitch(layers) / along.step);
}

int64_t GridShape::pads(Net net) const { return pad_stripes(net).count * pad_nodes(net).count; }

int64_t GridShape::total_nodes() const {
  int64_t n = 0;
  for (Net net : {Net::vdd, Net::gnd}) {
    for (int l = 1; l <= layers; ++l) n += layer_nodes(net, l);
    n += pads(net);
  }
  return n;
}

GridShape shape_for_nodes(int64_t nodes, int layers, int pads_every) {
  GridShape s;
  s.layers = layers;
  s.pads_every = pads_every;
  auto count = [&](int64_t w, int64_t h) {
    s.width = w;
    s.height = h;
    return s.total_nodes();
  };
  // The count grows monotonically with the side: bisect for the smallest square.
  int64_t lo = 1, hi = 2;
  while (count(hi, hi) < nodes) hi *= 2;
  while (lo + 1 < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    (count(mid, mid) >= nodes ? hi : lo) = mid;
  }
  // One track less in height halves the overshoot when it still reaches the target.
  if (hi > 1 && count(hi, hi - 1) >= nodes) return s;
  count(hi, hi);
  return s;
}

}  // namespace pgsim::gen
