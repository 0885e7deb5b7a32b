#include "app/png_writer.hpp"

#include "app/output_file.hpp"
#include "app/system_error.hpp"

#ifdef PGSIM_HAVE_PNG
#include <png.h>

#include <csetjmp>
#include <vector>
#endif

namespace pgsim {

#ifdef PGSIM_HAVE_PNG
namespace {

void append_bytes(png_structp png, png_bytep data, png_size_t length) {
  auto* out = static_cast<std::string*>(png_get_io_ptr(png));
  try {
    out->append(reinterpret_cast<const char*>(data), length);
  } catch (...) {
    png_error(png, "out of memory");  // no C++ exception may cross libpng's C frames
  }
}

void flush_nothing(png_structp) {}

void record_error(png_structp png, png_const_charp message) {
  auto* error = static_cast<std::string*>(png_get_error_ptr(png));
  *error = message;
  png_longjmp(png, 1);
}

// Encodes into `out`; returns false with `error` set. Everything with a destructor is made before
// setjmp, so the longjmp of a libpng error skips none.
bool encode_png(const RgbImage& image, std::string& out, std::string& error) {
  std::vector<png_bytep> rows(size_t(image.height()));
  for (int y = 0; y < image.height(); ++y) rows[size_t(y)] = const_cast<png_bytep>(image.row(y));
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &error, record_error, nullptr);
  if (!png) {
    error = "cannot start libpng";
    return false;
  }
  png_infop info = png_create_info_struct(png);
  if (!info || setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, info ? &info : nullptr);
    if (error.empty()) error = "cannot start libpng";
    return false;
  }
  png_set_write_fn(png, &out, append_bytes, flush_nothing);
  png_set_IHDR(png, info, png_uint_32(image.width()), png_uint_32(image.height()), 8, PNG_COLOR_TYPE_RGB,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_set_rows(png, info, rows.data());
  png_write_png(png, info, PNG_TRANSFORM_IDENTITY, nullptr);
  png_destroy_write_struct(&png, &info);
  return true;
}

}  // namespace

void write_png(const std::string& path, const RgbImage& image) {
  std::string bytes, error;
  if (!encode_png(image, bytes, error)) throw SystemError(path + ": cannot encode PNG: " + error);
  OutputFile file(path);
  file.write(bytes);
  file.commit();
}

bool png_supported() { return true; }

#else

bool png_supported() { return false; }

void write_png(const std::string& path, const RgbImage&) {
  throw SystemError(path + ": this pgsim was built without libpng, so it cannot write heat maps");
}

#endif

}  // namespace pgsim
