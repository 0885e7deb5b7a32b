#include "gpu/nccl_comm_ahead.hpp"

#include <chrono>

#include "gpu/nccl_comm.hpp"

namespace pgsim::gpu {

NcclCommAhead::NcclCommAhead(MPI_Comm comm) {
  const NcclJoin join = agree_nccl_join(comm);
  thread_ = std::thread([this, join] {
    const auto t0 = std::chrono::steady_clock::now();
    try {
      comm_ = std::make_unique<NcclComm>(join);
    } catch (...) {
      error_ = std::current_exception();
    }
    seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  });
}

NcclCommAhead::~NcclCommAhead() {
  if (thread_.joinable()) thread_.join();
}

const NcclComm& NcclCommAhead::get() {
  if (thread_.joinable()) thread_.join();
  if (error_) std::rethrow_exception(error_);
  return *comm_;
}

}  // namespace pgsim::gpu
