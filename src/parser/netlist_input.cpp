#include "netlist_input.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "input_error.hpp"

namespace pgsim {

NetlistInput::NetlistInput(const std::string& path) : path_(path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::is_directory(status)) throw InputError("cannot read netlist '" + path + "': it is a directory");
  // Devices and pipes have no size to read ahead, and /dev/zero would never end.
  if (!ec && !std::filesystem::is_regular_file(status))
    throw InputError("cannot read netlist '" + path + "': it is not a regular file");
  errno = 0;
  file_ = std::fopen(path.c_str(), "rb");
  if (!file_)
    throw InputError("cannot open netlist '" + path + "': " + (errno ? std::strerror(errno) : "no such file or not readable"));
  const auto size = std::filesystem::file_size(path, ec);
  total_ = ec ? 0 : size;
}

NetlistInput::~NetlistInput() {
  if (file_) std::fclose(file_);
}

size_t NetlistInput::read(char* dst, size_t n) {
  const size_t got = std::fread(dst, 1, n, file_);
  if (got < n && std::ferror(file_)) throw InputError("cannot read netlist '" + path_ + "': " + std::strerror(errno));
  consumed_ += got;
  return got;
}

}  // namespace pgsim
