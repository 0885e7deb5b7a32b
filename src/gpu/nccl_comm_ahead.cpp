#include "gpu/nccl_comm_ahead.hpp"

#include <chrono>
#include <stdexcept>

#include "gpu/nccl_comm.hpp"

namespace pgsim::gpu {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

NcclCommAhead::NcclCommAhead(MPI_Comm comm) : join_(std::make_unique<NcclJoin>(agree_nccl_join(comm))) {
  device_ = join_->device;
}

void NcclCommAhead::start() {
  if (thread_.joinable()) throw std::logic_error("NcclCommAhead::start() called twice");
  thread_ = std::thread([this] { work(); });
}

int NcclCommAhead::busy_cores() const {
  return thread_.joinable() && !done_.load(std::memory_order_relaxed) ? 1 : 0;
}

void NcclCommAhead::work() {
  try {
    auto t0 = std::chrono::steady_clock::now();
    comm_ = std::make_unique<NcclComm>(*join_);
    make_seconds_ = seconds_since(t0);
    std::vector<int> peers;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      told_.wait(lock, [this] { return peers_.has_value() || stop_; });
      if (!peers_) {
        done_ = true;
        return;
      }
      peers = *peers_;
    }
    t0 = std::chrono::steady_clock::now();
    comm_->connect(peers);
    connect_seconds_ = seconds_since(t0);
  } catch (...) {
    error_ = std::current_exception();
  }
  done_ = true;
}

NcclCommAhead::~NcclCommAhead() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  told_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void NcclCommAhead::connect(std::vector<int> peers) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    peers_ = std::move(peers);
  }
  told_.notify_one();
}

const NcclComm& NcclCommAhead::get() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!peers_) throw std::logic_error("NcclCommAhead::get() before connect()");  // it would wait forever
  }
  if (!thread_.joinable() && !comm_ && !error_) throw std::logic_error("NcclCommAhead::get() before start()");
  if (thread_.joinable()) thread_.join();
  if (error_) std::rethrow_exception(error_);
  return *comm_;
}

}  // namespace pgsim::gpu
