#include "gpu/nccl_comm.hpp"

#include <string>

#include "dist/host_ranks.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/device_buffer.hpp"

namespace pgsim::gpu {
namespace {

void check_nccl(ncclResult_t result, const char* call) {
  if (result != ncclSuccess) throw GpuError(std::string(call) + ": " + ncclGetErrorString(result));
}

}  // namespace

NcclJoin agree_nccl_join(MPI_Comm comm) {
  NcclJoin join;
  MPI_Comm_rank(comm, &join.rank);
  MPI_Comm_size(comm, &join.size);
  const auto [local_rank, local_size] = dist::host_ranks(comm);
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess) devices = 0;
  int short_here = local_size > devices ? 1 : 0, short_anywhere = 0;
  MPI_Allreduce(&short_here, &short_anywhere, 1, MPI_INT, MPI_MAX, comm);
  if (short_anywhere) {
    const std::string rule = ": the distributed GPU solve runs one rank per GPU";
    if (!short_here) throw GpuError("another host has more ranks than GPUs" + rule);
    if (devices == 0) throw GpuError("this host has no usable GPU" + rule);
    throw GpuError(std::to_string(local_size) + " ranks on this host share its " + std::to_string(devices) + " GPU(s)" +
                   rule + " (start at most " + std::to_string(devices) + " ranks per host)");
  }
  join.device = local_rank;
  if (join.rank == 0) check_nccl(ncclGetUniqueId(&join.id), "ncclGetUniqueId");
  MPI_Bcast(&join.id, sizeof join.id, MPI_BYTE, 0, comm);
  return join;
}

NcclComm::NcclComm(const NcclJoin& join) : device_(join.device) {
  PGSIM_CUDA(cudaSetDevice(device_));
  check_nccl(ncclCommInitRank(&comm_, join.size, join.id, join.rank), "ncclCommInitRank");
}

void NcclComm::connect(const std::vector<int>& peers) const {
  PGSIM_CUDA(cudaSetDevice(device_));
  DeviceBuffer<double> values(2 * peers.size() + 1);
  PGSIM_CUDA(cudaMemset(values.data(), 0, values.size() * sizeof(double)));
  cudaStream_t stream = nullptr;
  PGSIM_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  check_nccl(ncclGroupStart(), "ncclGroupStart");
  for (size_t k = 0; k < peers.size(); ++k) {
    check_nccl(ncclSend(values.data() + 2 * k, 1, ncclDouble, peers[k], comm_, stream), "ncclSend");
    check_nccl(ncclRecv(values.data() + 2 * k + 1, 1, ncclDouble, peers[k], comm_, stream), "ncclRecv");
  }
  check_nccl(ncclGroupEnd(), "ncclGroupEnd");
  double* last = values.data() + 2 * peers.size();
  check_nccl(ncclAllReduce(last, last, 1, ncclDouble, ncclSum, comm_, stream), "ncclAllReduce");
  const cudaError_t synced = cudaStreamSynchronize(stream);
  cudaStreamDestroy(stream);
  PGSIM_CUDA(synced);
}

NcclComm::~NcclComm() {
  if (comm_) ncclCommDestroy(comm_);
}

NcclHaloExchange::NcclHaloExchange(const dist::RankBlock& block, const NcclComm& comm)
    : block_(block), send_offsets_(send_offsets(block)), comm_(comm.get()) {}

void NcclHaloExchange::exchange(const double* send, double* halo, cudaStream_t stream) {
  check_nccl(ncclGroupStart(), "ncclGroupStart");
  for (size_t k = 0; k < block_.neighbors.size(); ++k) {
    const dist::Neighbor& nb = block_.neighbors[k];
    check_nccl(ncclRecv(halo + nb.recv_first, size_t(nb.recv_count), ncclDouble, nb.rank, comm_, stream), "ncclRecv");
    check_nccl(ncclSend(send + send_offsets_[k], nb.send.size(), ncclDouble, nb.rank, comm_, stream), "ncclSend");
  }
  check_nccl(ncclGroupEnd(), "ncclGroupEnd");
}

void NcclScalarSum::sum(double* values, int count, cudaStream_t stream) {
  check_nccl(ncclAllReduce(values, values, size_t(count), ncclDouble, ncclSum, comm_, stream), "ncclAllReduce");
}

}  // namespace pgsim::gpu
