#pragma once
// The job's NCCL communicator, made ahead (issue 17). ncclCommInitRank is most of a distributed
// GPU solve's upload when it waits for the solve (docs/distributed.md); made on a thread of its
// own, it joins the other ranks while the host reduces, and connects the rank's peers while the
// host builds the preconditioner.
// When to start it: after the parse. Begun with the run, it was made beside the CUDA context and
// the GPU parse, and slowed both on the 2-GPU machine (session 25, benchmarks/dist/README.md:
// P = 2's parse phase 0.898 s against 0.768 s begun after it, medians of 8). Its thread also
// wants a core: while it works the caller's OpenMP threads leave it one (busy_cores(); the file
// came 0.24 s sooner so in that session's probe).
// Plain C++ (no CUDA or NCCL headers), for the application.
#include <mpi.h>

#include <atomic>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace pgsim::gpu {

class NcclComm;
struct NcclJoin;

class NcclCommAhead {
 public:
  // Collective over `comm`: agrees on each rank's GPU and the communicator's id
  // (gpu/nccl_comm.hpp agree_nccl_join; its GpuError is thrown here, on every rank alike), so that
  // a job of more ranks than GPUs ends before its parse. Nothing is made until start().
  explicit NcclCommAhead(MPI_Comm comm);
  // Every rank, once: starts the thread that makes the communicator (collective among the ranks'
  // threads: a rank that never starts leaves the others' threads waiting in ncclCommInitRank).
  void start();
  // 1 from start() until the thread is done (the communicator made and connected, or failed), else 0.
  int busy_cores() const;
  // Stops the thread (before connect(), it connects nothing) and waits for it; destroys the
  // communicator.
  ~NcclCommAhead();
  NcclCommAhead(const NcclCommAhead&) = delete;
  NcclCommAhead& operator=(const NcclCommAhead&) = delete;

  // Every rank, once: the ranks this one exchanges with (its block's neighbours). The thread,
  // the communicator made, connects them and the all-reduce (NcclComm::connect) while the caller
  // builds the preconditioner.
  void connect(std::vector<int> peers);
  // The communicator, made and connected (waits for the thread); the thread's failure rethrown.
  // Requires start() and connect() first.
  const NcclComm& get();
  // The CUDA device this rank uses (agreed by the constructor; no wait for the communicator).
  int device() const { return device_; }
  // Seconds the thread took to make the communicator, and then to connect it (valid after get()).
  double make_seconds() const { return make_seconds_; }
  double connect_seconds() const { return connect_seconds_; }

 private:
  void work();

  std::unique_ptr<NcclJoin> join_;  // the agreed id and device (gpu/nccl_comm.hpp)
  int device_ = 0;
  std::unique_ptr<NcclComm> comm_;
  std::exception_ptr error_;
  double make_seconds_ = 0, connect_seconds_ = 0;
  std::mutex mutex_;
  std::condition_variable told_;
  std::optional<std::vector<int>> peers_;  // set by connect()
  bool stop_ = false;                      // set by the destructor
  std::atomic<bool> done_{false};          // set by the thread at its end
  std::thread thread_;
};

}  // namespace pgsim::gpu
