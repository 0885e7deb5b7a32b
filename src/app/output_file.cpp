#include "app/output_file.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "app/system_error.hpp"

namespace pgsim {
namespace {

constexpr int kMaxLinks = 40;  // the kernel's own limit on a chain of symbolic links
// A temporary's write-back to disk is started every this many bytes (TemporaryWrites), while the
// rest is still being formatted, rather than all of it by commit()'s fsync.
constexpr uint64_t kWriteBackBytes = uint64_t(32) << 20;

[[noreturn]] void fail(const std::string& path, const std::string& why) {
  throw SystemError("cannot write '" + path + "': " + why);
}
[[noreturn]] void fail(const std::string& path, int err) { fail(path, std::strerror(err)); }

enum class Kind { Descriptor, NewFile, RegularFile, Device, Socket };

struct Target {
  Kind kind;
  std::string path;     // the final target, symbolic links followed
  int descriptor = -1;  // Kind::Descriptor
  struct stat st {};    // Kind::RegularFile: the file being replaced
};

bool all_digits(const std::string& s) {
  return !s.empty() && s.size() < 10 && s.find_first_not_of("0123456789") == std::string::npos;
}

// The descriptor a path names without being a file of its own ("/dev/stdout", "/dev/fd/3",
// "/proc/self/fd/3": links into /proc whose text is not a path), or -1.
int descriptor_named(const std::string& p) {
  if (p == "/dev/stdout") return 1;
  if (p == "/dev/stderr") return 2;
  for (const std::string& prefix :
       {std::string("/dev/fd/"), std::string("/proc/self/fd/"), "/proc/" + std::to_string(::getpid()) + "/fd/"})
    if (p.compare(0, prefix.size(), prefix) == 0 && all_digits(p.substr(prefix.size())))
      return std::stoi(p.substr(prefix.size()));
  return -1;
}

std::string read_link(const std::string& path) {
  std::string text(256, '\0');
  for (;;) {
    const ssize_t n = ::readlink(path.c_str(), text.data(), text.size());
    if (n < 0) fail(path, errno);
    if (static_cast<size_t>(n) < text.size()) return text.substr(0, static_cast<size_t>(n));
    text.resize(2 * text.size());
  }
}

// Follows `path` through symbolic links to what an output there must do. A relative link is
// taken from the link's folder as written (never normalised lexically: "dir/.." must mean what
// the kernel makes of it when dir is itself a link).
Target resolve(const std::string& path) {
  if (path == "-") return {Kind::Descriptor, path, 1};  // as the user wrote it; a link to a file "-" is a file
  std::string p = path;
  for (int links = 0;; ++links) {
    if (int fd = descriptor_named(p); fd >= 0) return {Kind::Descriptor, p, fd};
    Target t{Kind::NewFile, p};
    if (::lstat(p.c_str(), &t.st) != 0) {
      if (errno == ENOENT) return t;  // a new file (possibly a dangling link's target)
      fail(path, errno);
    }
    if (S_ISLNK(t.st.st_mode)) {
      if (links == kMaxLinks) fail(path, ELOOP);
      const std::string link = read_link(p);
      p = link[0] == '/' ? link : p.substr(0, p.rfind('/') + 1) + link;
      continue;
    }
    if (S_ISREG(t.st.st_mode)) return t.kind = Kind::RegularFile, t;
    if (S_ISCHR(t.st.st_mode) || S_ISFIFO(t.st.st_mode)) return t.kind = Kind::Device, t;
    if (S_ISSOCK(t.st.st_mode)) return t.kind = Kind::Socket, t;
    fail(path, S_ISDIR(t.st.st_mode) ? "it is a directory" : "it is a block device");
  }
}

// Writes all of `bytes` to fd: at `offset` (pwrite), or at the file position when offset < 0.
void write_all(int fd, std::string_view bytes, int64_t offset, const std::string& path) {
  while (!bytes.empty()) {
    const ssize_t n = offset < 0 ? ::write(fd, bytes.data(), bytes.size()) : ::pwrite(fd, bytes.data(), bytes.size(), offset);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(path, errno);
    }
    bytes.remove_prefix(static_cast<size_t>(n));
    if (offset >= 0) offset += n;
  }
}

int connect_unix_socket(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof address.sun_path) return errno = ENAMETOOLONG, -1;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    const int err = errno;
    ::close(fd);
    return errno = err, -1;
  }
  return fd;
}

}  // namespace

OutputFile::OutputFile(std::string path) : path_(std::move(path)) {
  const Target t = resolve(path_);
  switch (t.kind) {
    case Kind::Descriptor:
      if (::fcntl(t.descriptor, F_GETFL) == -1) fail(path_, errno);
      if (t.descriptor <= 2) std::fflush(t.descriptor == 1 ? stdout : stderr);  // text printed before stays first
      fd_ = t.descriptor;
      owns_fd_ = false;
      return;
    case Kind::Device:
      fd_ = ::open(t.path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
      if (fd_ < 0) fail(path_, errno);
      return;
    case Kind::Socket:
      fd_ = connect_unix_socket(t.path);
      if (fd_ < 0) fail(path_, errno);
      return;
    case Kind::NewFile:
    case Kind::RegularFile:
      break;
  }
  // A name no other pgsim (pid) nor another output of this one (counter) uses; O_EXCL so that
  // nothing already there is ever opened.
  static std::atomic<unsigned> counter{0};
  target_ = t.path;
  do {
    temp_ = target_ + ".tmp" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  } while (fd_ < 0 && errno == EEXIST);
  if (fd_ < 0) {
    temp_.clear();
    fail(path_, errno);
  }
  if (t.kind == Kind::RegularFile) {
    // The replacement keeps the file's owner and group where this process may set them (root;
    // else the group where it belongs to it), then its permission bits (chown clears set-id bits).
    if (::fchown(fd_, t.st.st_uid, t.st.st_gid) != 0 && ::fchown(fd_, static_cast<uid_t>(-1), t.st.st_gid) != 0) {
      // neither: the new file is this process's, as any file it creates
    }
    if (::fchmod(fd_, t.st.st_mode & 07777) != 0) fail(path_, errno);
  }
}

OutputFile::~OutputFile() {
  if (fd_ >= 0 && owns_fd_) ::close(fd_);
  if (!temp_.empty()) ::unlink(temp_.c_str());
}

void TemporaryWrites::write(int fd, std::string_view bytes, int64_t offset, const std::string& path) {
  {
    const std::lock_guard<std::mutex> one_at_a_time(mutex_);
    write_all(fd, bytes, offset, path);
    unstarted_ += bytes.size();
    if (unstarted_ < kWriteBackBytes) return;
    unstarted_ = 0;
  }
  // The write-back of every dirty page of the file (0, 0: to its end), beside the next writes;
  // only a hint (an error here would show again at fsync), so its result is not checked.
  ::sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
}

void OutputFile::write(std::string_view bytes) {
  if (temp_.empty())
    write_all(fd_, bytes, -1, path_);
  else
    writes_.write(fd_, bytes, -1, path_);
}

void OutputFile::write_at(uint64_t offset, std::string_view bytes) {
  if (temp_.empty()) throw std::logic_error("OutputFile::write_at: not a regular file");
  writes_.write(fd_, bytes, int64_t(offset), path_);
}

OutputFilePart::OutputFilePart(std::string path, const std::string& temporary) : path_(std::move(path)) {
  do fd_ = ::open(temporary.c_str(), O_WRONLY | O_CLOEXEC);  // never creates: the owner made it
  while (fd_ < 0 && errno == EINTR);
  if (fd_ < 0) fail(path_, errno);
}

OutputFilePart::~OutputFilePart() {
  if (fd_ >= 0) ::close(fd_);
}

void OutputFilePart::write_at(uint64_t offset, std::string_view bytes) {
  writes_.write(fd_, bytes, int64_t(offset), path_);
}

void OutputFilePart::flush() {
  const int fd = fd_;
  fd_ = -1;
  int err = ::fsync(fd) != 0 ? errno : 0;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err != 0) fail(path_, err);
}

namespace {

// The file that a rename over `target` would unlink for good (a regular file of one link), held
// open so that the rename does not release it; -1 where there is none, or it cannot be opened
// (then the rename releases it, as without this).
//
// Why: a file's last link gone and no descriptor left, the kernel releases its pages and blocks
// in the thread that unlinked it, here the rename: 0.41-0.57 s of a 1.59 GB voltages file on the
// 2-GPU machine's ext4, where a new target took 0.001 s (benchmarks/dist/README.md). Held, the
// file goes when the descriptor closes, on a thread of its own (release_in_background), beside
// whatever the process does next; at its exit at the latest.
int hold_replaced(const std::string& target) {
  int fd;
  do fd = ::open(target.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);  // never waits (a FIFO put there)
  while (fd < 0 && errno == EINTR);
  if (fd < 0) return -1;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1) return fd;
  ::close(fd);
  return -1;
}

void release_in_background(int fd) {
  if (fd >= 0) std::thread([fd] { ::close(fd); }).detach();
}

}  // namespace

void OutputFile::commit() {
  const int fd = fd_;
  fd_ = -1;
  if (!owns_fd_) return;
  int err = 0;
  if (!temp_.empty() && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;  // a deferred write error (NFS, a full disk)
  if (err == 0 && !temp_.empty()) {
    const int replaced = hold_replaced(target_);
    if (::rename(temp_.c_str(), target_.c_str()) != 0) err = errno;
    release_in_background(replaced);
  }
  if (err != 0) fail(path_, err);  // the destructor removes the temporary
  temp_.clear();
}

void check_writable(const std::string& path) {
  const Target t = resolve(path);
  switch (t.kind) {
    case Kind::Descriptor: {
      const int flags = ::fcntl(t.descriptor, F_GETFL);
      if (flags == -1) fail(path, errno);
      if ((flags & O_ACCMODE) == O_RDONLY) fail(path, "the descriptor is open for reading only");
      return;
    }
    case Kind::Device:
    case Kind::Socket:
      // Opening a FIFO for writing would wait for a reader (and a reader would see the probe's
      // close as the end of its input); opening some devices has effects. Ask, do not open.
      if (::access(t.path.c_str(), W_OK) != 0) fail(path, errno);
      return;
    case Kind::NewFile:
    case Kind::RegularFile:
      OutputFile probe(path);  // its own temporary, removed when probe goes
      return;
  }
}

}  // namespace pgsim
