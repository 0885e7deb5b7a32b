#pragma once
// NCCL between the GPUs of an MPI job (issue 17): one rank per GPU, the communicator
// bootstrapped through MPI, and the two things the distributed PCG asks of it: the halo
// exchange of gpu/halo_spmv.hpp (grouped ncclSend/ncclRecv) and the all-reduce of its scalars
// (gpu/pcg_gpu.hpp DeviceScalarSum). Everything is queued on streams, so it can be captured in
// a CUDA graph (NCCL supports capture).
#include <mpi.h>
#include <nccl.h>

#include <vector>

#include "dist/partition.hpp"
#include "gpu/halo_spmv.hpp"
#include "gpu/pcg_gpu.hpp"

namespace pgsim::gpu {

// Who this rank is in the job's communicator, agreed over `comm` (collective: every rank calls
// it). Its GPU: its rank among the ranks of its host (MPI_Comm_split_type shared), which must be
// below the host's device count; GpuError on every rank when two ranks of one host would share a
// GPU (checked on all ranks before NCCL starts, so none is left waiting). The id: rank 0 makes
// it, MPI_Bcast gives it to the others.
struct NcclJoin {
  int rank = 0, size = 1;
  int device = 0;  // the CUDA device this rank uses
  ncclUniqueId id{};
};
NcclJoin agree_nccl_join(MPI_Comm comm);

// The communicator: selects join.device on the calling thread and joins the others with
// ncclCommInitRank (every rank of the job at once). No MPI call: any thread may make it
// (gpu/nccl_comm_ahead.hpp makes it beside the parse).
class NcclComm {
 public:
  explicit NcclComm(const NcclJoin& join);
  ~NcclComm();
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;

  ncclComm_t get() const { return comm_; }
  int device() const { return device_; }  // the CUDA device this rank uses

  // Collective: one double each way with every rank of `peers` (grouped sends and receives) and
  // one all-reduced double, waited for. NCCL connects a communicator's peers and collectives at
  // their first use; done here, that work leaves the solve's first exchange and sum.
  void connect(const std::vector<int>& peers) const;

 private:
  ncclComm_t comm_ = nullptr;
  int device_ = 0;
};

// The halo of a RankBlock: in one NCCL group, per neighbour one ncclRecv into its halo range
// and one ncclSend of its packed values (NCCL ranks are the MPI ranks of the block).
class NcclHaloExchange final : public HaloExchange {
 public:
  NcclHaloExchange(const dist::RankBlock& block, const NcclComm& comm);
  void exchange(const double* send, double* halo, cudaStream_t stream) override;

 private:
  const dist::RankBlock& block_;
  std::vector<int32_t> send_offsets_;
  ncclComm_t comm_;
};

// ncclAllReduce (sum, in place) of PCG's device scalars.
class NcclScalarSum final : public DeviceScalarSum {
 public:
  explicit NcclScalarSum(const NcclComm& comm) : comm_(comm.get()) {}
  void sum(double* values, int count, cudaStream_t stream) override;

 private:
  ncclComm_t comm_;
};

}  // namespace pgsim::gpu
