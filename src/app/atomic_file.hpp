#pragma once
// Writes a file through a temporary beside it and a rename, so a failed run never
// leaves a partial file where an earlier result was.
#include <cstdio>
#include <string>
#include <string_view>

namespace pgsim {

class AtomicFile {
 public:
  explicit AtomicFile(std::string path);  // throws SystemError when the temporary cannot be made
  ~AtomicFile();                          // removes the temporary unless commit() ran
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(std::string_view bytes);
  void commit();  // flush, close, rename over the target

 private:
  std::string path_, temp_;
  std::FILE* file_ = nullptr;
};

// Throws the SystemError that writing `path` would, now rather than after a long run
// (it creates and removes the temporary; the target is not touched).
void check_writable(const std::string& path);

}  // namespace pgsim
