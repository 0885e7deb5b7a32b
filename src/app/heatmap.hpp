#pragma once
// Heat maps of the IR drop: one image per metal layer, nodes placed by the x and y in their
// n<layer>_<x>_<y> names, coloured by drop or bounce in mV, with title, colour bar and scale.
#include <string>
#include <vector>

#include "app/ir_drop.hpp"
#include "app/rgb_image.hpp"
#include "parser/netlist.hpp"

namespace pgsim {

struct Heatmap {
  std::string layer;  // "n1"
  RgbImage image;
  // Where the die is drawn: node (x, y) lands on pixel (plot_x + round((x - x0) * scale),
  // plot_y + plot_h - 1 - round((y - y0) * scale)). The same for every layer of one netlist.
  int plot_x = 0, plot_y = 0, plot_w = 0, plot_h = 0;
  double x0 = 0, y0 = 0, scale = 1;
  double min_mv = 0, max_mv = 0;  // the colour bar's range: the layer's smallest and largest value
};

// One heat map per layer that has counted nodes with positions; the die's longer side spans
// `plot_size` pixels.
std::vector<Heatmap> render_heatmaps(const Netlist& netlist, const NodeDeviations& deviations, int plot_size = 1000);

// Writes <dir>/<layer>.png for every heat map (creating dir); returns the paths. Throws SystemError.
std::vector<std::string> write_heatmaps(const std::string& dir, const Netlist& netlist,
                                        const NodeDeviations& deviations);

// The colour map (viridis, perceptually uniform): t in [0, 1], low to high.
Rgb heat_color(double t);

}  // namespace pgsim
