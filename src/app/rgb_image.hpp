#pragma once
// A plain 8-bit RGB raster with the few drawing operations the heat maps need.
#include <cstdint>
#include <string_view>
#include <vector>

namespace pgsim {

struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
};

class RgbImage {
 public:
  RgbImage(int width, int height, Rgb background);

  int width() const { return width_; }
  int height() const { return height_; }
  const uint8_t* row(int y) const { return pixels_.data() + size_t(y) * size_t(width_) * 3; }
  Rgb at(int x, int y) const;

  void set(int x, int y, Rgb c);                      // ignores points outside the image
  void fill_rect(int x, int y, int w, int h, Rgb c);  // clipped to the image
  void frame_rect(int x, int y, int w, int h, Rgb c);  // 1-pixel outline

 private:
  int width_, height_;
  std::vector<uint8_t> pixels_;
};

// Text in a built-in 5x7 pixel font (digits, letters, common punctuation), each font pixel drawn
// as a scale x scale square; (x, y) is the top left corner. Characters it lacks draw as a box.
void draw_text(RgbImage& image, int x, int y, std::string_view text, Rgb color, int scale);
int text_width(std::string_view text, int scale);
int text_height(int scale);  // cap height plus the descender rows

}  // namespace pgsim
