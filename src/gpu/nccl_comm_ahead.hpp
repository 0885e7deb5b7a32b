#pragma once
// The job's NCCL communicator, made ahead (issue 17). ncclCommInitRank is most of a distributed
// GPU solve's upload when it waits for the solve (docs/distributed.md); made on a thread of its
// own from the run's start, it joins the other ranks while the host parses and reduces.
// Plain C++ (no CUDA or NCCL headers), for the application.
#include <mpi.h>

#include <exception>
#include <memory>
#include <thread>

namespace pgsim::gpu {

class NcclComm;

class NcclCommAhead {
 public:
  // Collective over `comm`: agrees on each rank's GPU and the communicator's id
  // (gpu/nccl_comm.hpp agree_nccl_join; its GpuError is thrown here, on every rank alike), then
  // starts the thread that makes the communicator.
  explicit NcclCommAhead(MPI_Comm comm);
  // Waits for the thread; destroys the communicator.
  ~NcclCommAhead();
  NcclCommAhead(const NcclCommAhead&) = delete;
  NcclCommAhead& operator=(const NcclCommAhead&) = delete;

  // The communicator, once the thread has made it (waits for it); the thread's failure rethrown.
  const NcclComm& get();
  // How long the thread took to make it (valid after get()).
  double seconds() const { return seconds_; }

 private:
  std::unique_ptr<NcclComm> comm_;
  std::exception_ptr error_;
  double seconds_ = 0;
  std::thread thread_;
};

}  // namespace pgsim::gpu
