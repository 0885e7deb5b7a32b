// Where a voltages file's write time goes (issue 17, session 22): 1.6 GB into a new file in DIR by
// THREADS threads (default 16) in 1 MB chunks, each chunk first touched as if formatted, four ways:
//   0. pwrite one chunk at a time (a mutex), the write-back started every 64 MB (sync_file_range),
//      then fsync: how app/output_file.cpp writes a regular file;
//   1. pwrite from every thread at once, then fsync;
//   2. posix_fallocate and one shared mapping, every thread copying into it, then fsync;
//   3. as 2, the write-back started every 64 MB.
// Prints, for each, the seconds to the last write, the fsync's, and both. Where the fsync's share
// stays whatever the way, the disk bounds the file, not the copies into the page cache.
//   build/benchmarks/bench_write_paths /tmp 16
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

bool write_chunk(int fd, const char* data, size_t bytes, off_t at) {
  while (bytes > 0) {
    const ssize_t n = ::pwrite(fd, data, bytes, at);
    if (n <= 0) return false;
    data += n, bytes -= size_t(n), at += n;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "/tmp";
  const int threads = argc > 2 ? std::max(1, std::atoi(argv[2])) : 16;
  constexpr size_t kTotal = size_t(1600) << 20, kChunk = size_t(1) << 20, kChunks = kTotal / kChunk;
  constexpr size_t kWriteBack = size_t(64) << 20;
  const char* names[] = {"pwrite, one at a time, write-back every 64 MB", "pwrite, all threads at once", "mmap",
                         "mmap, write-back every 64 MB"};
  for (int way = 0; way < 4; ++way) {
    const std::string path = dir + "/bench_write_paths.bin";
    ::unlink(path.c_str());
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
      std::perror(path.c_str());
      return 1;
    }
    const double start = now();
    char* map = nullptr;
    if (way >= 2) {
      if (::posix_fallocate(fd, 0, kTotal) != 0) {
        std::fprintf(stderr, "posix_fallocate failed on %s\n", path.c_str());
        return 1;
      }
      void* m = ::mmap(nullptr, kTotal, PROT_WRITE, MAP_SHARED, fd, 0);
      if (m == MAP_FAILED) {
        std::perror("mmap");
        return 1;
      }
      map = static_cast<char*>(m);
    }
    std::atomic<size_t> next{0}, unstarted{0};
    std::atomic<bool> failed{false};
    std::mutex one_at_a_time;
    std::vector<std::thread> team;
    for (int t = 0; t < threads; ++t)
      team.emplace_back([&] {
        std::vector<char> chunk(kChunk, 'x');
        for (size_t c; (c = next++) < kChunks;) {
          for (size_t i = 0; i < kChunk; i += 64) chunk[i] = char('0' + c % 10);  // as if formatted
          const auto at = off_t(c * kChunk);
          if (way == 0) {
            const std::lock_guard<std::mutex> lock(one_at_a_time);
            if (!write_chunk(fd, chunk.data(), kChunk, at)) failed = true;
          } else if (way == 1) {
            if (!write_chunk(fd, chunk.data(), kChunk, at)) failed = true;
          } else {
            std::memcpy(map + at, chunk.data(), kChunk);
          }
          if ((way == 0 || way == 3) && (unstarted += kChunk) >= kWriteBack) {
            unstarted = 0;
            ::sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
          }
        }
      });
    for (std::thread& t : team) t.join();
    const double written = now();
    if (map) ::munmap(map, kTotal);
    if (::fsync(fd) != 0 || failed) {
      std::fprintf(stderr, "a write or the fsync failed on %s\n", path.c_str());
      return 1;
    }
    ::close(fd);
    const double synced = now();
    std::printf("%d (%s): written %.3f s, fsync %.3f s, total %.3f s\n", way, names[way], written - start, synced - written,
                synced - start);
    ::unlink(path.c_str());
  }
  return 0;
}
