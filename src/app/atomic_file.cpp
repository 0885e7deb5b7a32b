#include "app/atomic_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "app/system_error.hpp"

namespace pgsim {

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  std::error_code ec;
  if (std::filesystem::is_directory(path_, ec)) throw SystemError("cannot write '" + path_ + "': it is a directory");
  temp_ = path_ + ".tmp" + std::to_string(::getpid());
  file_ = std::fopen(temp_.c_str(), "wb");
  if (!file_) throw SystemError("cannot write '" + path_ + "': " + std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (file_) {
    std::fclose(file_);
    std::remove(temp_.c_str());
  }
}

void AtomicFile::write(std::string_view bytes) {
  if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size())
    throw SystemError("cannot write '" + path_ + "': " + std::strerror(errno));
}

void AtomicFile::commit() {
  bool ok = std::fflush(file_) == 0 && ::fsync(::fileno(file_)) == 0;
  int err = errno;
  ok = (std::fclose(file_) == 0) && ok;
  file_ = nullptr;
  if (!ok || std::rename(temp_.c_str(), path_.c_str()) != 0) {
    if (ok) err = errno;
    std::remove(temp_.c_str());
    throw SystemError("cannot write '" + path_ + "': " + std::strerror(err));
  }
}

void check_writable(const std::string& path) { AtomicFile probe(path); }

}  // namespace pgsim
