#pragma once
// How many OpenMP threads a run's phases use: no more than --threads (or all cores), and no more
// than the input gives work for (issue 13). A parallel region costs every thread a wake-up and a
// barrier, and the parser holds a block of text per thread: on ibmpg1 (2.4 MB, 30k nodes) the
// whole CPU run took 0.187 s on 16 threads of the H100 machine and 0.052 s on one.
#include <cstdint>
#include <optional>
#include <string>

namespace pgsim {

// Parsing: one thread per this many bytes of netlist text: four of the parser's default 1 MB
// chunks, so each thread gets at least its two chunks of the first block and the next (a chosen
// grain, not a measured one: ibmpg1, 2.4 MB, parses on one thread).
constexpr uint64_t kParseBytesPerThread = uint64_t(4) << 20;
// Every phase after parsing (reduction, elimination, hierarchy, solve, write): one thread per this
// many netlist nodes. ibmpg1 (30,635 nodes) runs on one thread, 0.3M nodes on 9, 1M on 16 or more.
constexpr uint64_t kNodesPerThread = uint64_t(1) << 15;

// ceil(work / per_thread), at least 1 and at most cap (cap >= 1).
int threads_for(uint64_t work, uint64_t per_thread, int cap);

// The netlist's text size when it is known before reading: a plain regular file's size; nullopt
// for standard input, a pipe or other non-regular file, gzip data (its text is larger) or a
// path that cannot be read (the parser then reports it).
std::optional<uint64_t> netlist_text_bytes(const std::string& path);

// Sets omp_set_num_threads for the lifetime of the object and puts the previous count back at
// the end (run() may be called again, by tests, with another input).
class ThreadCountScope {
 public:
  ThreadCountScope();
  ~ThreadCountScope();
  ThreadCountScope(const ThreadCountScope&) = delete;
  ThreadCountScope& operator=(const ThreadCountScope&) = delete;
  // omp_set_num_threads(threads_for(work, per_thread, cap())); returns that count.
  int limit_to(uint64_t work, uint64_t per_thread);
  // The count the run may use at most: omp_get_max_threads() when the scope began.
  int cap() const { return cap_; }

 private:
  int cap_;
};

}  // namespace pgsim
