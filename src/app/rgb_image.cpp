#include "app/rgb_image.hpp"

#include <algorithm>

namespace pgsim {

RgbImage::RgbImage(int width, int height, Rgb background)
    : width_(width), height_(height), pixels_(size_t(width) * size_t(height) * 3) {
  fill_rect(0, 0, width, height, background);
}

Rgb RgbImage::at(int x, int y) const {
  const uint8_t* p = row(y) + size_t(x) * 3;
  return {p[0], p[1], p[2]};
}

void RgbImage::set(int x, int y, Rgb c) {
  if (x < 0 || y < 0 || x >= width_ || y >= height_) return;
  uint8_t* p = pixels_.data() + (size_t(y) * size_t(width_) + size_t(x)) * 3;
  p[0] = c.r;
  p[1] = c.g;
  p[2] = c.b;
}

void RgbImage::fill_rect(int x, int y, int w, int h, Rgb c) {
  const int x0 = std::max(x, 0), y0 = std::max(y, 0);
  const int x1 = std::min(x + w, width_), y1 = std::min(y + h, height_);
  for (int yy = y0; yy < y1; ++yy)
    for (int xx = x0; xx < x1; ++xx) set(xx, yy, c);
}

void RgbImage::frame_rect(int x, int y, int w, int h, Rgb c) {
  fill_rect(x, y, w, 1, c);
  fill_rect(x, y + h - 1, w, 1, c);
  fill_rect(x, y, 1, h, c);
  fill_rect(x + w - 1, y, 1, h, c);
}

}  // namespace pgsim
