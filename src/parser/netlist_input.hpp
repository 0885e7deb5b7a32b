#pragma once
// The bytes of one netlist file, read front to back in blocks, so a parser never needs the whole
// text in memory at once (a 50M-node netlist is 3.8 GB of text).
//
// Contract: read() hands out the file's bytes in order and exactly once; 0 means the end. Errors
// (cannot open, a directory, a read failure) are InputErrors naming the path. progress() counts the
// bytes of the underlying file consumed so far and total() its size when known (0 when not), so a
// caller can show "percent read" whatever the source is.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace pgsim {

class NetlistInput {
 public:
  explicit NetlistInput(const std::string& path);
  ~NetlistInput();
  NetlistInput(const NetlistInput&) = delete;
  NetlistInput& operator=(const NetlistInput&) = delete;

  // Up to n bytes into dst; fewer only at the end of the file; 0 once it is all read.
  size_t read(char* dst, size_t n);
  uint64_t progress() const { return consumed_; }
  uint64_t total() const { return total_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  uint64_t consumed_ = 0;
  uint64_t total_ = 0;
};

}  // namespace pgsim
