#pragma once
// A rank's byte range of the netlist read on its GPU before MPI_Init (issue 17).
//
// Why: with Open MPI's UCX component, MPI_Init sets up UCX's CUDA transports, and beside it a
// rank's own CUDA context took 0.46-0.59 s on the 2-GPU machine, against 0.30-0.37 s where no
// CUDA work ran beside it (benchmarks/dist/README.md). A rank's GPU read of its range can begin
// only once that context is made, and it needs no MPI: the launcher's environment gives the
// rank and the job's size (dist/mpi_session.hpp launched_place), and the range's cuts are read
// from the file (dist/distributed_parse.hpp range_start). So main.cpp makes the context first,
// on this object's thread, then calls MPI_Init while the thread reads the range; the
// distributed parse takes the part from here (take()) where its range is the same.
//
// Nothing here decides anything: where the launcher's word and MPI's disagree, or the file
// changed between the two looks at it, take() answers nullopt and the range is read as usual.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "app/options.hpp"
#include "parser/netlist.hpp"
#include "parser/netlist_part.hpp"

namespace pgsim {

class EarlyRangeRead {
 public:
  // Starts the thread for rank `rank` of `ranks` (the launcher's word) on device `device` where
  // `opt` may read the range on the GPU (--backend gpu, --parse not cpu, a netlist file); else
  // starts nothing. The thread makes the context, then reads the range where --parse asks for it
  // by its size (app/backend.hpp gpu_parse_wanted). `threads`: the OpenMP threads of its copies
  // (0: OpenMP's default).
  EarlyRangeRead(const Options& opt, int rank, int ranks, int device, int threads);
  ~EarlyRangeRead();  // waits for the thread
  EarlyRangeRead(const EarlyRangeRead&) = delete;
  EarlyRangeRead& operator=(const EarlyRangeRead&) = delete;

  // Returns once the thread has made (or failed to make) its device's context; at once where
  // nothing was started.
  void wait_for_context();

  // The distributed parse's reader of rank `device`'s range [begin, end) of `path`
  // (dist::PartReader), called once: where the thread read exactly that range on that device
  // with these options, waits for it (options.progress called with its bytes meanwhile) and
  // answers true with `part`, or false where the GPU reader declined or failed (logged as
  // app/distributed_run.cpp logs its own reads; the range is then read on the CPU). nullopt
  // where nothing was read early for that range, the thread left.
  std::optional<bool> take(const std::string& path, uint64_t begin, uint64_t end, int device,
                           const ParseOptions& options, NetlistPart& part);

 private:
  void read(const std::string& path, const std::string& parse, int rank, int ranks, int threads);

  int device_ = -1;
  bool taken_ = false;
  // Set by the thread, under mutex_ where told_ is signalled.
  std::mutex mutex_;
  std::condition_variable told_;
  bool context_done_ = false, done_ = false;
  std::atomic<uint64_t> copied_{0}, total_{0};  // the read's progress
  std::string path_;
  uint64_t begin_ = 0, end_ = 0;
  bool tried_ = false, accepted_ = false;  // tried: the GPU reader was asked for [begin_, end_)
  double context_seconds_ = 0;
  std::string why_;     // a decline's reason
  std::string failed_;  // a failure's text (a GpuError, memory, an unreadable file)
  std::string times_;   // gpu::GpuParseTimes::text() of an accepted read
  NetlistPart part_;
  std::thread thread_;
};

}  // namespace pgsim
