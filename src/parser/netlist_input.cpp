#include "netlist_input.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>

#include "input_error.hpp"

namespace pgsim {
namespace {

constexpr unsigned char kGzipMagic[2] = {0x1f, 0x8b};
constexpr size_t kCompressedBlock = 1 << 18;
// The most one ::read() (capped below 2 GiB on Linux) or inflate() (32-bit counts) is asked for.
constexpr size_t kMaxCall = size_t(1) << 30;

bool is_stdin(const std::string& path) { return path == "-"; }

// "netlist 'P'" or "netlist from standard input", for the messages of this file.
std::string which(const std::string& path) {
  return is_stdin(path) ? "netlist from standard input" : "netlist '" + path + "'";
}

// Why a netlist of this file type is not read, or nullptr: regular files, pipes and FIFOs are.
// Other devices are refused: /dev/zero or /dev/urandom would never end.
const char* refusal(mode_t mode) {
  if (S_ISDIR(mode)) return "it is a directory";
  if (S_ISREG(mode) || S_ISFIFO(mode)) return nullptr;
  if (S_ISSOCK(mode)) return "it is a socket, not a file or a pipe";
  return "it is a device, not a file or a pipe";
}

}  // namespace

std::string netlist_display_name(const std::string& path) { return is_stdin(path) ? "<stdin>" : path; }

bool gzip_magic(const char* first, size_t n) { return n >= 2 && std::memcmp(first, kGzipMagic, 2) == 0; }

class NetlistInput::Gzip {
 public:
  // `first`: bytes of the stream already read (the magic).
  Gzip(const char* first, size_t n) : buffer_(new unsigned char[kCompressedBlock]) {
    std::memcpy(buffer_.get(), first, n);
    stream_.next_in = buffer_.get();
    stream_.avail_in = static_cast<uInt>(n);
    // 16 + MAX_WBITS: a gzip header and trailer, not a zlib one.
    if (inflateInit2(&stream_, 16 + MAX_WBITS) != Z_OK) throw std::bad_alloc();
  }
  ~Gzip() { inflateEnd(&stream_); }

  // Decompresses into dst until it is full or the input ends; compressed bytes come from `in`.
  size_t read(char* dst, size_t n, NetlistInput& in) {
    size_t done = 0;
    while (done < n) {
      if (stream_.avail_in == 0) {
        stream_.avail_in = static_cast<uInt>(in.read_raw(reinterpret_cast<char*>(buffer_.get()), kCompressedBlock));
        stream_.next_in = buffer_.get();
        if (stream_.avail_in == 0) {
          if (in_member_) in.fail("truncated gzip data (the input ends inside a compressed stream)");
          break;
        }
      }
      if (!in_member_) {  // another member follows the one that ended (`cat a.gz b.gz`)
        inflateReset(&stream_);
        in_member_ = true;
      }
      const size_t chunk = std::min(n - done, kMaxCall);
      stream_.next_out = reinterpret_cast<unsigned char*>(dst + done);
      stream_.avail_out = static_cast<uInt>(chunk);
      const int rc = inflate(&stream_, Z_NO_FLUSH);
      done += chunk - stream_.avail_out;
      if (rc == Z_STREAM_END) in_member_ = false;
      else if (rc == Z_MEM_ERROR) throw std::bad_alloc();
      else if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT || rc == Z_STREAM_ERROR)
        in.fail(std::string("corrupt gzip data (") + (stream_.msg ? stream_.msg : "invalid stream") + ")");
      // Z_OK and Z_BUF_ERROR: more input or room needed, which the loop provides.
    }
    return done;
  }

 private:
  z_stream stream_{};
  std::unique_ptr<unsigned char[]> buffer_;
  bool in_member_ = true;
};

NetlistInput::NetlistInput(const std::string& path) : path_(path) {
  struct stat st {};
  if (is_stdin(path)) {
    fd_ = STDIN_FILENO;
  } else {
    // stat() before open(): what is refused is never opened.
    if (::stat(path.c_str(), &st) != 0) {
      const int err = errno;
      throw InputError("cannot open " + which(path) + ": " + std::strerror(err));
    }
    if (const char* why = refusal(st.st_mode)) fail(why);
    // A FIFO's open() waits for its writer, as any reader of a FIFO does.
    do fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    while (fd_ < 0 && errno == EINTR);
    if (fd_ < 0) {
      const int err = errno;
      throw InputError("cannot open " + which(path) + ": " + std::strerror(err));
    }
    owns_fd_ = true;
  }
  if (::fstat(fd_, &st) != 0) fail(std::strerror(errno));
  if (::isatty(fd_)) fail("it is a terminal (pipe a netlist in, or name a file)");
  // Standard input may also be a socket (inetd, some job runners): a stream like a pipe.
  if (!(is_stdin(path) && S_ISSOCK(st.st_mode)))
    if (const char* why = refusal(st.st_mode)) fail(why);
  if (S_ISREG(st.st_mode)) total_ = static_cast<uint64_t>(st.st_size);

  // A pipe may hand out one byte at a time: read_raw loops until both magic bytes are in.
  peeked_ = read_raw(peek_, sizeof peek_);
  if (gzip_magic(peek_, peeked_)) {
    gzip_ = std::make_unique<Gzip>(peek_, peeked_);
    peeked_ = 0;
  }
}

NetlistInput::~NetlistInput() {
  if (owns_fd_) ::close(fd_);
}

void NetlistInput::fail(const std::string& what) const { throw InputError("cannot read " + which(path_) + ": " + what); }

size_t NetlistInput::read_raw(char* dst, size_t n) {
  size_t done = 0;
  while (done < n) {
    const ssize_t got = ::read(fd_, dst + done, std::min(n - done, kMaxCall));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) fail(std::strerror(errno));
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  consumed_ += done;
  return done;
}

size_t NetlistInput::read(char* dst, size_t n) {
  if (gzip_) return gzip_->read(dst, n, *this);
  size_t done = 0;
  while (peek_pos_ < peeked_ && done < n) dst[done++] = peek_[peek_pos_++];
  return done + read_raw(dst + done, n - done);
}

FileRangeInput::FileRangeInput(const std::string& path, uint64_t begin, uint64_t end) : path_(path) {
  const auto refuse = [&](const std::string& why) {
    throw InputError("cannot read " + which(path) + " in parts: " + why);
  };
  if (is_stdin(path)) refuse("standard input is read by one process only");
  do fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);  // O_NONBLOCK: a FIFO is refused, not waited on
  while (fd_ < 0 && errno == EINTR);
  if (fd_ < 0) {
    const int err = errno;
    throw InputError("cannot open " + which(path) + ": " + std::strerror(err));
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int err = errno;
    ::close(fd_);
    throw InputError("cannot read " + which(path) + ": " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    refuse(S_ISDIR(st.st_mode) ? "it is a directory" : "it is not a regular file (a pipe or a device is read by one process only)");
  }
  size_ = static_cast<uint64_t>(st.st_size);
  char magic[2];
  if (::pread(fd_, magic, 2, 0) == 2 && gzip_magic(magic, 2)) {
    ::close(fd_);
    refuse("it is gzip-compressed (decompress it, or run pgsim in one process)");
  }
  end_ = std::min(end, size_);
  begin_ = pos_ = std::min(begin, end_);
}

FileRangeInput::~FileRangeInput() { ::close(fd_); }

size_t FileRangeInput::read(char* dst, size_t n) {
  size_t done = 0;
  n = static_cast<size_t>(std::min<uint64_t>(n, end_ - pos_));
  while (done < n) {
    const ssize_t got = ::pread(fd_, dst + done, std::min(n - done, kMaxCall), static_cast<off_t>(pos_));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw InputError("cannot read " + which(path_) + ": " + std::strerror(errno));
    if (got == 0) throw InputError("cannot read " + which(path_) + ": it became shorter while being read");
    done += static_cast<size_t>(got);
    pos_ += static_cast<uint64_t>(got);
  }
  return done;
}

}  // namespace pgsim
