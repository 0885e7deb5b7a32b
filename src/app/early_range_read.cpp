#include "app/early_range_read.hpp"

#include <spdlog/spdlog.h>

#include <omp.h>

#include <chrono>
#include <exception>

#include "app/backend.hpp"
#include "mna/stopwatch.hpp"
#include "parser/netlist_input.hpp"
// A build without MPI runs no job, and one without CUDA reads no range on a GPU: then the object
// starts nothing.
#if defined(PGSIM_HAVE_CUDA) && defined(PGSIM_HAVE_MPI)
#define PGSIM_EARLY_RANGE_READ
#include "dist/distributed_parse.hpp"
#include "gpu/gpu_parse.hpp"
#include "gpu/warm_up.hpp"
#endif

namespace pgsim {

EarlyRangeRead::EarlyRangeRead([[maybe_unused]] const Options& opt, [[maybe_unused]] int rank,
                               [[maybe_unused]] int ranks, int device, [[maybe_unused]] int threads)
    : device_(device) {
#ifdef PGSIM_EARLY_RANGE_READ
  if (opt.backend == "gpu" && opt.parse != "cpu" && opt.netlist != "-" && rank >= 0 && rank < ranks && device >= 0)
    thread_ = std::thread([this, path = opt.netlist, parse = opt.parse, rank, ranks, threads] {
      read(path, parse, rank, ranks, threads);
    });
#endif
}

EarlyRangeRead::~EarlyRangeRead() {
  if (thread_.joinable()) thread_.join();
}

void EarlyRangeRead::wait_for_context() {
  std::unique_lock<std::mutex> lock(mutex_);
  told_.wait(lock, [&] { return !thread_.joinable() || context_done_; });
}

void EarlyRangeRead::read([[maybe_unused]] const std::string& path, [[maybe_unused]] const std::string& parse,
                          [[maybe_unused]] int rank, [[maybe_unused]] int ranks, [[maybe_unused]] int threads) {
#ifdef PGSIM_EARLY_RANGE_READ
  if (threads > 0) omp_set_num_threads(threads);  // this thread's own count (the copies back)
  Stopwatch watch;
  const bool context = gpu::make_context(device_);
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    context_done_ = true;
    context_seconds_ = watch.lap();
  }
  told_.notify_all();
  try {
    const uint64_t size = FileRangeInput(path, 0, 0).file_size();
    const uint64_t begin = dist::range_start(path, size, rank, ranks);
    const uint64_t end = dist::range_start(path, size, rank + 1, ranks);
    if (context && gpu_parse_wanted(parse, true, end - begin)) {
      path_ = path, begin_ = begin, end_ = end;
      tried_ = true;
      ParseOptions options;
      options.dc_names_only = true;  // as run_distributed asks (take() checks it)
      options.progress = [](uint64_t done, uint64_t total, void* self) {
        static_cast<EarlyRangeRead*>(self)->copied_ = done;
        static_cast<EarlyRangeRead*>(self)->total_ = total;
      };
      options.progress_user = this;
      gpu::GpuParseTimes times;
      accepted_ = gpu::parse_netlist_part_on_gpu(path, begin, end, options, device_, part_, why_, &times);
      times_ = times.text();
    }
  } catch (const std::exception& e) {
    // Before the GPU reader was asked (the file unreadable): the parse reads it again and reports
    // it; in the reader (a GpuError, memory): the range is read on the CPU, as after a decline.
    failed_ = e.what();
  }
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  told_.notify_all();
#endif
}

std::optional<bool> EarlyRangeRead::take(const std::string& path, uint64_t begin, uint64_t end, int device,
                                         const ParseOptions& options, NetlistPart& part) {
  if (!thread_.joinable() || taken_) return std::nullopt;
  taken_ = true;
  {
    // Meanwhile the progress line shows the text copied, as the reader's own calls would.
    std::unique_lock<std::mutex> lock(mutex_);
    while (!told_.wait_for(lock, std::chrono::milliseconds(100), [&] { return done_; }))
      if (options.progress) options.progress(copied_.load(), total_.load(), options.progress_user);
  }
  thread_.join();  // what the thread wrote is read below
  if (!tried_ || path != path_ || device != device_ || begin != begin_ || end != end_ || !options.dc_names_only) return std::nullopt;
  if (!failed_.empty()) {
    spdlog::warn("the GPU netlist reader failed on the range [{}, {}) of {} ({}); reading it on the CPU", begin, end,
                 path, failed_);
    return false;
  }
  if (!accepted_) {
    spdlog::info("the GPU netlist reader declined the range [{}, {}) of {}: {}; reading it on the CPU", begin, end,
                 path, why_);
    return false;
  }
  if (options.progress) options.progress(total_.load(), total_.load(), options.progress_user);
  spdlog::debug("range [{}, {}) parsed on GPU {}, begun before MPI_Init once its context was made ({:.3f} s): {}", begin,
                end, device, context_seconds_, times_);
  part = std::move(part_);
  return true;
}

}  // namespace pgsim
