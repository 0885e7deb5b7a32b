#include "app/heatmap.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>

#include "app/grid_name.hpp"
#include "app/png_writer.hpp"
#include "app/system_error.hpp"
#include "parser/shown.hpp"

namespace pgsim {
namespace {

constexpr Rgb kPage{255, 255, 255}, kInk{20, 20, 20}, kNoNode{222, 222, 222}, kFrame{90, 90, 90};
constexpr int kTextScale = 2, kTitleScale = 3;

// What pass one learns about a layer before anything is drawn.
struct LayerInfo {
  int64_t nodes = 0;
  double min = std::numeric_limits<double>::infinity(), max = -std::numeric_limits<double>::infinity();
  uint32_t worst_node = 0;
  bool has_drop = false, has_bounce = false;
  int64_t x_min = std::numeric_limits<int64_t>::max(), x_max = std::numeric_limits<int64_t>::min();
  int64_t y_min = std::numeric_limits<int64_t>::max(), y_max = std::numeric_limits<int64_t>::min();
};

struct Placement {
  int64_t x0, y0;
  double scale;
  int w, h;
  int px(int64_t x) const { return static_cast<int>(std::lround(double(x - x0) * scale)); }
  int py(int64_t y) const { return h - 1 - static_cast<int>(std::lround(double(y - y0) * scale)); }
};

// Every pixel holding nodes shows the largest value among them, so no hot spot is averaged
// away; an empty pixel within `radius` of such a pixel takes the nearest one's value, so the
// picture reads as a map of the layer rather than a scatter of dots.
std::vector<float> fill_nearest(const std::vector<float>& binned, int w, int h, int radius) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> out(binned.size(), nan);
  std::vector<int> dist(binned.size(), std::numeric_limits<int>::max());
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const float v = binned[size_t(y) * size_t(w) + size_t(x)];
      if (std::isnan(v)) continue;
      for (int dy = -radius; dy <= radius; ++dy) {
        const int yy = y + dy;
        if (yy < 0 || yy >= h) continue;
        for (int dx = -radius; dx <= radius; ++dx) {
          const int xx = x + dx, d = dx * dx + dy * dy;
          if (xx < 0 || xx >= w || d > radius * radius) continue;
          const size_t q = size_t(yy) * size_t(w) + size_t(xx);
          if (d < dist[q] || (d == dist[q] && v > out[q])) {
            dist[q] = d;
            out[q] = v;
          }
        }
      }
    }
  return out;
}

// Fill radius from how densely the layer's nodes cover its own extent: about the typical gap.
int fill_radius(const std::vector<float>& binned, const LayerInfo& info, const Placement& at) {
  const int64_t occupied = std::count_if(binned.begin(), binned.end(), [](float v) { return !std::isnan(v); });
  const double w = double(at.px(info.x_max) - at.px(info.x_min) + 1);
  const double h = double(at.py(info.y_min) - at.py(info.y_max) + 1);
  const double gap = std::sqrt(w * h / double(std::max<int64_t>(occupied, 1)));
  return std::clamp(static_cast<int>(std::ceil(0.75 * gap)), 0, 40);
}

// Decimals that make neighbouring colour-bar labels differ.
int label_decimals(double range_mv) {
  if (range_mv >= 50) return 0;
  if (range_mv >= 5) return 1;
  if (range_mv >= 0.5) return 2;
  return 4;
}

void draw_marker(RgbImage& img, int x, int y) {
  for (int d = -8; d <= 8; ++d) {
    for (int t = -1; t <= 1; ++t) {
      img.set(x + d, y + t, kPage);
      img.set(x + t, y + d, kPage);
    }
  }
  for (int d = -7; d <= 7; ++d) {
    img.set(x + d, y, kInk);
    img.set(x, y + d, kInk);
  }
}

std::string kind_title(const LayerInfo& info) {
  if (info.has_drop && info.has_bounce) return "IR drop / ground bounce (mV)";
  return info.has_drop ? "IR drop (mV)" : "ground bounce (mV)";
}

Heatmap render_layer(const std::string& layer, const LayerInfo& info, const std::vector<float>& binned,
                     const Placement& at, const Netlist& netlist, const std::array<int64_t, 4>& die) {
  const double min_mv = info.min * 1e3, max_mv = info.max * 1e3;
  const double span = max_mv > min_mv ? max_mv - min_mv : 1.0;
  const int decimals = label_decimals(max_mv - min_mv);
  std::array<std::string, 5> bar_labels;
  for (size_t i = 0; i < bar_labels.size(); ++i)
    bar_labels[i] = fmt::format("{:.{}f}", min_mv + (max_mv - min_mv) * double(i) / 4.0, decimals);
  const std::string x_lo = std::to_string(die[0]), x_hi = std::to_string(die[1]);
  const std::string y_lo = std::to_string(die[2]), y_hi = std::to_string(die[3]);

  const int th = text_height(kTextScale), gap = 12, bar_w = 36;
  int label_w = 0;
  for (const auto& l : bar_labels) label_w = std::max(label_w, text_width(l, kTextScale));
  const int left = 20 + std::max(text_width(y_lo, kTextScale), text_width(y_hi, kTextScale)) + gap;
  const int top = 20 + text_height(kTitleScale) + 8 + th + 20;
  const int right = 2 * gap + bar_w + 8 + std::max(label_w, text_width("mV", kTextScale)) + 20;
  const int bottom = gap + th + 8 + th + 16;
  // The colour bar needs room for its labels even when the die is a thin strip.
  const int plot_area_h = std::max(at.h, 5 * th);

  Heatmap map{layer, RgbImage(left + at.w + right, top + plot_area_h + bottom, kPage)};
  map.plot_x = left;
  map.plot_y = top;
  map.plot_w = at.w;
  map.plot_h = at.h;
  map.x0 = double(at.x0);
  map.y0 = double(at.y0);
  map.scale = at.scale;
  map.min_mv = min_mv;
  map.max_mv = max_mv;
  RgbImage& img = map.image;

  // Title and a line on the worst node, which the cross on the map points at.
  const std::string title = "layer " + layer + " - " + kind_title(info);
  draw_text(img, left, 20, title, kInk, kTitleScale);
  const std::string sub =
      fmt::format("worst {:.{}f} mV at {} (+), {} nodes", max_mv, decimals + 1, shown_plain(netlist.node_names[info.worst_node]),
                  info.nodes);
  draw_text(img, left, 20 + text_height(kTitleScale) + 8, sub, kInk, kTextScale);

  // The map.
  const int radius = fill_radius(binned, info, at);
  const std::vector<float> filled = fill_nearest(binned, at.w, at.h, radius);
  for (int y = 0; y < at.h; ++y)
    for (int x = 0; x < at.w; ++x) {
      const float v = filled[size_t(y) * size_t(at.w) + size_t(x)];
      img.set(left + x, top + y, std::isnan(v) ? kNoNode : heat_color((double(v) * 1e3 - min_mv) / span));
    }
  img.frame_rect(left - 1, top - 1, at.w + 2, at.h + 2, kFrame);
  const auto pos = grid_position(netlist.node_names[info.worst_node]);
  draw_marker(img, left + at.px(pos->x), top + at.py(pos->y));

  // Scale: the die's extent in name units at the corners.
  draw_text(img, left, top + at.h + gap, x_lo, kInk, kTextScale);
  draw_text(img, left + at.w - text_width(x_hi, kTextScale), top + at.h + gap, x_hi, kInk, kTextScale);
  draw_text(img, left - gap - text_width(y_hi, kTextScale), top, y_hi, kInk, kTextScale);
  draw_text(img, left - gap - text_width(y_lo, kTextScale), top + at.h - th, y_lo, kInk, kTextScale);
  const std::string caption = "x, y: coordinates in the node names";
  draw_text(img, left + (at.w - text_width(caption, kTextScale)) / 2, top + at.h + gap + th + 8, caption, kInk,
            kTextScale);

  // Colour bar, low at the bottom, with five labelled ticks.
  const int bar_x = left + at.w + 2 * gap, bar_h = plot_area_h;
  for (int y = 0; y < bar_h; ++y)
    img.fill_rect(bar_x, top + y, bar_w, 1, heat_color(1.0 - double(y) / double(std::max(bar_h - 1, 1))));
  img.frame_rect(bar_x - 1, top - 1, bar_w + 2, bar_h + 2, kFrame);
  draw_text(img, bar_x + bar_w + 8, top - th - 6, "mV", kInk, kTextScale);
  for (size_t i = 0; i < bar_labels.size(); ++i) {
    const int y = top + bar_h - 1 - static_cast<int>(std::lround(double(bar_h - 1) * double(i) / 4.0));
    img.fill_rect(bar_x + bar_w, y, 6, 1, kFrame);
    const int ty = std::clamp(y - th / 2 + 2, top - 2, top + bar_h - th + 2);
    draw_text(img, bar_x + bar_w + 10, ty, bar_labels[i], kInk, kTextScale);
  }
  return map;
}

}  // namespace

Rgb heat_color(double t) {
  // viridis at 0, 0.1, ..., 1 (the published matplotlib colour map's sample values)
  static constexpr std::array<Rgb, 11> kStops = {{{68, 1, 84},
                                                  {72, 36, 117},
                                                  {65, 68, 135},
                                                  {53, 95, 141},
                                                  {42, 120, 142},
                                                  {33, 145, 140},
                                                  {34, 168, 132},
                                                  {68, 191, 112},
                                                  {122, 209, 81},
                                                  {189, 223, 38},
                                                  {253, 231, 37}}};
  t = std::clamp(std::isnan(t) ? 0.0 : t, 0.0, 1.0) * double(kStops.size() - 1);
  const size_t i = std::min(static_cast<size_t>(t), kStops.size() - 2);
  const double f = t - double(i);
  auto mix = [f](uint8_t a, uint8_t b) { return static_cast<uint8_t>(std::lround(a + (b - a) * f)); };
  return {mix(kStops[i].r, kStops[i + 1].r), mix(kStops[i].g, kStops[i + 1].g), mix(kStops[i].b, kStops[i + 1].b)};
}

std::vector<Heatmap> render_heatmaps(const Netlist& netlist, const NodeDeviations& d, int plot_size) {
  // Pass one: which layers, their ranges, and the die's extent over all layers.
  std::map<int, LayerInfo> layers;
  std::array<int64_t, 4> die = {std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(),
                                std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
  for (uint32_t i = 1; i < netlist.node_count(); ++i) {
    if (d.kind[i] == NetKind::None) continue;
    const auto pos = grid_position(netlist.node_names[i]);
    if (!pos) continue;
    LayerInfo& L = layers[pos->layer];
    ++L.nodes;
    L.min = std::min(L.min, d.value[i]);
    if (d.value[i] > L.max || L.worst_node == 0) L.worst_node = i;
    L.max = std::max(L.max, d.value[i]);
    (d.kind[i] == NetKind::Supply ? L.has_drop : L.has_bounce) = true;
    L.x_min = std::min(L.x_min, pos->x);
    L.x_max = std::max(L.x_max, pos->x);
    L.y_min = std::min(L.y_min, pos->y);
    L.y_max = std::max(L.y_max, pos->y);
    die = {std::min(die[0], pos->x), std::max(die[1], pos->x), std::min(die[2], pos->y), std::max(die[3], pos->y)};
  }
  if (layers.empty()) return {};
  const double span = double(std::max<int64_t>({die[1] - die[0], die[3] - die[2], 1}));
  Placement at{die[0], die[2], double(plot_size - 1) / span, 0, 0};
  at.w = static_cast<int>(std::lround(double(die[1] - die[0]) * at.scale)) + 1;
  at.h = static_cast<int>(std::lround(double(die[3] - die[2]) * at.scale)) + 1;

  // Pass two: every node into its layer's raster, the largest value per pixel.
  std::map<int, std::vector<float>> binned;
  for (auto& [layer, info] : layers)
    binned[layer].assign(size_t(at.w) * size_t(at.h), std::numeric_limits<float>::quiet_NaN());
  for (uint32_t i = 1; i < netlist.node_count(); ++i) {
    if (d.kind[i] == NetKind::None) continue;
    const auto pos = grid_position(netlist.node_names[i]);
    if (!pos) continue;
    float& cell = binned[pos->layer][size_t(at.py(pos->y)) * size_t(at.w) + size_t(at.px(pos->x))];
    const auto v = static_cast<float>(d.value[i]);
    if (std::isnan(cell) || v > cell) cell = v;
  }

  std::vector<Heatmap> maps;
  for (auto& [layer, info] : layers) {
    maps.push_back(render_layer(fmt::format("n{}", layer), info, binned[layer], at, netlist, die));
    binned[layer] = {};
  }
  return maps;
}

std::vector<std::string> write_heatmaps(const std::string& dir, const Netlist& netlist,
                                        const NodeDeviations& deviations) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw SystemError(dir + ": cannot create the heat-map folder: " + ec.message());
  std::vector<std::string> paths;
  for (const Heatmap& map : render_heatmaps(netlist, deviations)) {
    paths.push_back((std::filesystem::path(dir) / (map.layer + ".png")).string());
    write_png(paths.back(), map.image);
  }
  return paths;
}

}  // namespace pgsim
