#pragma once
// The bytes of one netlist file, read front to back in blocks, so a parser never needs the whole
// text in memory at once (a 50M-node netlist is 3.8 GB of text).
//
// Contract: read() hands out the file's bytes in order and exactly once; 0 means the end. Errors
// (cannot open, a directory, a read failure) are InputErrors naming the path. progress() counts the
// bytes of the underlying file consumed so far and total() its size when known (0 when not), so a
// caller can show "percent read" whatever the source is.
//
// Sources: a regular file; "-", standard input; a pipe or FIFO (read to its end, total() 0), and
// as standard input a socket too. Devices are refused before they are opened (/dev/zero or
// /dev/urandom would never end), and so is a terminal as standard input (almost always a mistake:
// `pgsim -` typed without a pipe). A gzip stream (magic bytes 1f 8b, whatever the
// file is called; several members one after another as `cat a.gz b.gz` makes) is decompressed:
// read() hands out the decompressed text, progress() and total() count compressed bytes. Corrupt
// or truncated gzip data is an InputError naming the file, raised by the read() that reaches it,
// so no caller ever sees a silently shortened text.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace pgsim {

// What messages call the netlist at `path`: the path, or "<stdin>" for "-".
std::string netlist_display_name(const std::string& path);

// Whether a file's first n bytes start a gzip stream (magic 1f 8b): NetlistInput's test, for a
// caller that sizes work by the text before reading it.
bool gzip_magic(const char* first, size_t n);

// Bytes [begin, end) of a regular file of plain text, read with pread (no file offset shared):
// one part of a netlist that several processes read at once (netlist_part.hpp). The file must
// be one that can be entered in the middle: a regular file (not standard input, a pipe or a
// device) and not gzip; end is clamped to its size. Errors are InputErrors naming the path.
class FileRangeInput {
 public:
  FileRangeInput(const std::string& path, uint64_t begin, uint64_t end);
  ~FileRangeInput();
  FileRangeInput(const FileRangeInput&) = delete;
  FileRangeInput& operator=(const FileRangeInput&) = delete;

  // Up to n bytes into dst; fewer only at the range's end; 0 once it is all read.
  size_t read(char* dst, size_t n);
  uint64_t progress() const { return pos_ - begin_; }
  uint64_t total() const { return end_ - begin_; }
  uint64_t file_size() const { return size_; }

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0, begin_ = 0, end_ = 0, pos_ = 0;
};

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
  bool compressed() const { return gzip_ != nullptr; }

 private:
  class Gzip;  // zlib's inflate state and its input buffer
  size_t read_raw(char* dst, size_t n);  // the file's own bytes, looping over short reads
  [[noreturn]] void fail(const std::string& what) const;

  std::string path_;
  int fd_ = -1;
  bool owns_fd_ = false;
  char peek_[2];  // the first bytes, read to look for the gzip magic; handed out first when plain
  size_t peeked_ = 0, peek_pos_ = 0;
  std::unique_ptr<Gzip> gzip_;
  uint64_t consumed_ = 0;
  uint64_t total_ = 0;
};

}  // namespace pgsim
