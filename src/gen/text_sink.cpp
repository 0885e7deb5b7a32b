#include "gen/text_sink.hpp"

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace pgsim::gen {
namespace {

std::runtime_error io_error(const std::string& what, const std::string& path) {
  return std::runtime_error(what + " " + path + ": " + std::strerror(errno));
}

}  // namespace

TextSink::TextSink(const std::string& path) : path_(path), buf_(kCapacity) {
  if (path == "-") {
    file_ = stdout;
  } else {
    file_ = std::fopen(path.c_str(), "wb");
    if (!file_) throw io_error("cannot open", path);
    owns_file_ = true;
  }
}

TextSink::~TextSink() {
  if (owns_file_ && file_) std::fclose(file_);
}

void TextSink::flush(size_t room) {
  if (used_ > 0 && std::fwrite(buf_.data(), 1, used_, file_) != used_) throw io_error("cannot write", path_);
  written_ += used_;
  used_ = 0;
  if (room > buf_.size()) buf_.resize(room);
}

void TextSink::close() {
  flush(0);
  int rc = owns_file_ ? std::fclose(file_) : std::fflush(file_);
  file_ = nullptr;
  if (rc != 0) throw io_error("cannot write", path_);
}

}  // namespace pgsim::gen
