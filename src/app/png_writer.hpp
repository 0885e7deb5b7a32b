#pragma once
// PNG files through libpng.
#include <string>

#include "app/rgb_image.hpp"

namespace pgsim {

// Writes `image` as an 8-bit RGB PNG through OutputFile (atomically for a regular file).
// Throws SystemError, also when pgsim was built without libpng.
void write_png(const std::string& path, const RgbImage& image);
// Whether this build can write PNG files at all, to refuse a request before a long solve.
bool png_supported();

}  // namespace pgsim
