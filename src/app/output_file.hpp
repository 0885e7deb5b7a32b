#pragma once
// Where pgsim writes an output (-o, --json, --export-system, --heatmap): the path decides how.
//
// - "-": standard output, written directly.
// - A regular file, existing or new: written to a temporary beside it and renamed over it at
//   commit(), so a failed run never leaves a partial file where an earlier result was. An existing
//   file keeps its permission bits, and its owner and group where the process may set them.
// - A symbolic link (a chain of them, or a dangling one) is followed to its final target, which is
//   then treated as above: the temporary is made beside the target and renamed over it, so the
//   link stays a link.
// - A character device, FIFO or socket (/dev/null, a named pipe): opened and written directly,
//   never replaced; /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N write to the
//   process's descriptor N. A FIFO is opened only when the output is written (opening one
//   for writing waits for a reader).
// - A directory or block device: refused.
//
// Every failure is a SystemError "cannot write 'PATH': reason", write errors included (ENOSPC
// of /dev/full, EPIPE of a pipe whose reader left: SIGPIPE is expected to be ignored).
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

namespace pgsim {

// The writes into a regular temporary, from one thread (OutputFile::write) or from several at
// once (write_at), one at a time, with its write-back to disk started every kWriteBackBytes (32
// MB) of them, so that the commit's fsync waits for the last ones only.
// One at a time: the kernel copies a file's writes one at a time anyway (ext4 holds the inode's
// lock across the copy), and threads that met there spun on that lock. Waiting on a mutex
// instead, they leave their cores to the threads still formatting: the 50M-node grid's voltages
// file (1.59 GB) on 32 threads of the 2-GPU machine took 7.0 s of CPU against 11.8 s, in 0.78
// against 0.75 s (bench_write; benchmarks/dist/README.md, session 18). The wall time is the
// kernel's (16 threads took as long as 32): the copies one at a time, and the write-back to
// disk that the commit's fsync waits for.
class TemporaryWrites {
 public:
  // `bytes` at `offset` of fd, or at its file position where offset < 0 (path: for messages).
  void write(int fd, std::string_view bytes, int64_t offset, const std::string& path);

 private:
  std::mutex mutex_;
  uint64_t unstarted_ = 0;  // bytes written since the last write-back start
};

class OutputFile {
 public:
  explicit OutputFile(std::string path);  // opens the target or the temporary; throws SystemError
  ~OutputFile();                          // removes the temporary unless commit() ran
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void write(std::string_view bytes);
  // Regular file: flush to disk, close, rename over the target (a file it replaces is released on
  // a thread of its own, not in the rename). Otherwise: close (never stdout).
  void commit();

  // For an output that several processes write at once (app/distributed_voltages.hpp): the
  // temporary (a regular target), which they open as OutputFileParts, or empty when the output
  // is written directly (a device, a FIFO, standard output: then only this process writes).
  const std::string& temporary() const { return temp_; }
  // Writes at `offset` of the temporary (a regular target only; TemporaryWrites). Several threads
  // may write disjoint ranges at once (no other call meanwhile).
  void write_at(uint64_t offset, std::string_view bytes);

 private:
  std::string path_;    // as the user wrote it, for messages
  std::string target_;  // the final target, symlinks followed (regular files only)
  std::string temp_;    // the temporary beside target_; empty when written directly
  int fd_ = -1;
  bool owns_fd_ = true;  // false for standard output and the other inherited descriptors
  TemporaryWrites writes_;  // a regular target's (into temp_)
};

// Another process's OutputFile temporary (OutputFile::temporary()), opened to write a part of
// it at given offsets; the owner commits the whole once every part is flushed. Failures are
// SystemErrors naming `path`, the output as the user gave it.
class OutputFilePart {
 public:
  OutputFilePart(std::string path, const std::string& temporary);
  ~OutputFilePart();
  OutputFilePart(const OutputFilePart&) = delete;
  OutputFilePart& operator=(const OutputFilePart&) = delete;

  // As OutputFile::write_at.
  void write_at(uint64_t offset, std::string_view bytes);
  // To disk (fsync) and closed.
  void flush();

 private:
  std::string path_;
  int fd_ = -1;
  TemporaryWrites writes_;
};

// Throws the SystemError that opening `path` as an OutputFile would, now rather than after a
// long run. It creates nothing but its own temporary beside a regular target (removed at once)
// and never opens a device, FIFO or socket (it checks write permission with access()).
void check_writable(const std::string& path);

}  // namespace pgsim
