#pragma once
// How many OpenMP threads a run's phases use: no more than --threads (or all cores), and no more
// than the input gives work for (issue 13). Until CHOLMOD was opened only when used
// (pcg/cholmod_library.hpp), every process started with OpenBLAS's thread per core spinning for
// work, and ibmpg1 (2.4 MB, 30,635 nodes) ran slower on 16 threads than on one (H100 machine,
// 0.21 against 0.10 s). Without them threads pay on small inputs too: ibmpg1's wall time was
// 80 ms on one thread, 66 on 4, 64 on 8 and 55 on 15 (81b340e with both grains divided by 1 to
// 16, medians of 7 runs).
#include <cstdint>
#include <optional>
#include <string>

namespace pgsim {

// Parsing: one thread per this many bytes of netlist text, the parser's chunk (chunk_parser.hpp),
// so that no thread is without one: ibmpg1 parses on 10 threads.
constexpr uint64_t kParseBytesPerThread = uint64_t(256) << 10;
// Every phase after parsing (reduction, elimination, hierarchy, solve, write): one thread per this
// many netlist nodes. ibmpg1 runs on 15 threads, 32k nodes on 16.
constexpr uint64_t kNodesPerThread = uint64_t(1) << 11;

// ceil(work / per_thread), at least 1 and at most cap (cap >= 1).
int threads_for(uint64_t work, uint64_t per_thread, int cap);

// The netlist's text size when it is known before reading: a plain regular file's size; nullopt
// for standard input, a pipe or other non-regular file, gzip data (its text is larger) or a
// path that cannot be read (the parser then reports it).
std::optional<uint64_t> netlist_text_bytes(const std::string& path);

// An MPI rank's OpenMP threads when neither --threads nor OMP_NUM_THREADS gives them (issue 17).
// OpenMP's own default, every core the process may run on, is wrong under mpirun either way: with
// OpenMPI's default binding (a core per rank at -np 2) each rank runs one thread, unbound each
// takes every core of the host (2-GPU machine, 32 cores, 50M-node grid at -np 2 with --backend
// gpu: 47.1 s with one thread a rank, 17.8 s with 32, against 9.6-11.1 s with 15;
// benchmarks/dist/README.md). A rank's share is the host's cores over its ranks there, never more
// than the cores the rank may run on. `spare_core`: less one core for the rank's threads that are
// not OpenMP's, where they run beside the team's host work: the CPU back end, whose block CMG and
// PCG are the host's (MPI's threads there; with the hierarchy built on the host, NCCL's too
// stalled the team at its barriers: 9.6 s at 15 threads a rank, 10.5 s at 16, session 7). A GPU
// rank (--backend gpu) builds its hierarchy and solves on its GPU, NCCL connecting its peers
// meanwhile, and keeps its whole share: 16 threads a rank reached P = 2's file sooner than 15 in
// 13 of 14 paired rounds (three calls, session 20).
struct RankThreads {
  int threads;  // at least 1
  int share;    // the rank's share of its host's cores (at least 1)
  bool bound_below_share() const { return threads < share; }  // the launcher bound it to fewer cores
};
RankThreads rank_threads(int host_cores, int host_ranks, int allowed_cores, bool spare_core);

// Sets omp_set_num_threads for the lifetime of the object and puts the previous count back at
// the end (run() may be called again, by tests, with another input).
class ThreadCountScope {
 public:
  ThreadCountScope();
  ~ThreadCountScope();
  ThreadCountScope(const ThreadCountScope&) = delete;
  ThreadCountScope& operator=(const ThreadCountScope&) = delete;
  // omp_set_num_threads(threads_for(work, per_thread, cap)) and returns that count, where cap is
  // cap(), and, when `busy_cores` > 0, no more than the cores (omp_get_num_procs) less those: cores
  // another thread of the process keeps busy meanwhile (the GPU warm-up, app/backend.hpp). OpenMP's threads wait
  // for each other at every barrier, so one of them sharing a core stalls the whole team: on the
  // H100 machine (16 cores) a 2M-node grid with the warm-up beside the parse took 0.393 s to
  // parse on 16 threads against 0.256 on 15, and a 0.3M one 0.175 s to reduce against 0.020
  // (benchmarks/ibmpg/README.md, "the warm-up's core").
  int limit_to(uint64_t work, uint64_t per_thread, int busy_cores = 0);
  // The count the run may use at most: omp_get_max_threads() when the scope began.
  int cap() const { return cap_; }

 private:
  int cap_;
};

}  // namespace pgsim
