#include "app/reference_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "parser/input_error.hpp"

namespace pgsim {

std::ifstream open_reference_file(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError("cannot read " + what + " '" + path + "': it is a directory");
  errno = 0;
  std::ifstream in(path);
  if (!in) throw InputError("cannot open " + what + " '" + path + "': " + (errno ? std::strerror(errno) : "not readable"));
  return in;
}

}  // namespace pgsim
