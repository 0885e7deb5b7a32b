#include "gpu/halo_spmv.hpp"

#include "gpu/launch.cuh"

namespace pgsim::gpu {
namespace {

__global__ void pack_kernel(const double* __restrict__ x, const int32_t* __restrict__ index, int32_t count,
                            double* __restrict__ send) {
  const int32_t i = int32_t(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < count) send[i] = x[index[i]];
}

// One thread per boundary row: the rows are few (the cut) and short (a handful of couplings each).
__global__ void boundary_kernel(int32_t rows, const int32_t* __restrict__ ptr, const int32_t* __restrict__ col,
                                const double* __restrict__ val, const int32_t* __restrict__ row_of,
                                const double* __restrict__ halo, double* __restrict__ y) {
  const int32_t k = int32_t(blockIdx.x * blockDim.x + threadIdx.x);
  if (k >= rows) return;
  double s = 0;
  for (int32_t e = ptr[k]; e < ptr[k + 1]; ++e) s += val[e] * halo[col[e]];
  y[row_of[k]] += s;
}

std::vector<int32_t> concatenated_send_lists(const dist::RankBlock& block) {
  std::vector<int32_t> all;
  for (const dist::Neighbor& nb : block.neighbors) all.insert(all.end(), nb.send.begin(), nb.send.end());
  return all;
}

}  // namespace

std::vector<int32_t> send_offsets(const dist::RankBlock& block) {
  std::vector<int32_t> offsets{0};
  for (const dist::Neighbor& nb : block.neighbors) offsets.push_back(offsets.back() + int32_t(nb.send.size()));
  return offsets;
}

void pack_send_values(const double* x, const int32_t* index, int32_t count, double* send, cudaStream_t stream) {
  if (count == 0) return;
  pack_kernel<<<blocks_for(count), kBlock, 0, stream>>>(x, index, count, send);
  PGSIM_CUDA_LAUNCH();
}

void add_boundary_terms(const DeviceCsr& B, const int32_t* rows, const double* halo, double* y, cudaStream_t stream) {
  if (B.rows == 0) return;
  boundary_kernel<<<blocks_for(B.rows), kBlock, 0, stream>>>(B.rows, B.ptr.data(), B.col.data(), B.val.data(), rows,
                                                             halo, y);
  PGSIM_CUDA_LAUNCH();
}

HaloSpmv::HaloSpmv(const dist::RankBlock& block, SpmvLayout layout, HaloExchange& exchange)
    : interior_(make_device_spmv(layout, block.interior)),
      boundary_(block.boundary),
      boundary_rows_(block.boundary_rows),
      send_index_(concatenated_send_lists(block)),
      send_(send_index_.size()),
      halo_(size_t(block.halo())),
      exchange_(exchange),
      has_neighbors_(!block.neighbors.empty()) {
  PGSIM_CUDA(cudaStreamCreateWithFlags(&comm_, cudaStreamNonBlocking));
  PGSIM_CUDA(cudaEventCreateWithFlags(&packed_, cudaEventDisableTiming));
  PGSIM_CUDA(cudaEventCreateWithFlags(&received_, cudaEventDisableTiming));
}

HaloSpmv::~HaloSpmv() {
  cudaEventDestroy(received_);
  cudaEventDestroy(packed_);
  cudaStreamDestroy(comm_);
}

void HaloSpmv::multiply(const double* x, double* y, cudaStream_t stream) {
  if (!has_neighbors_) {
    interior_->multiply(x, y, stream);
    return;
  }
  pack_send_values(x, send_index_.data(), int32_t(send_index_.size()), send_.data(), stream);
  PGSIM_CUDA(cudaEventRecord(packed_, stream));
  PGSIM_CUDA(cudaStreamWaitEvent(comm_, packed_, 0));
  exchange_.exchange(send_.data(), halo_.data(), comm_);
  PGSIM_CUDA(cudaEventRecord(received_, comm_));
  interior_->multiply(x, y, stream);
  PGSIM_CUDA(cudaStreamWaitEvent(stream, received_, 0));
  add_boundary_terms(boundary_, boundary_rows_.data(), halo_.data(), y, stream);
}

size_t HaloSpmv::matrix_bytes() const {
  return interior_->matrix_bytes() + boundary_.ptr.size() * 4 + boundary_.col.size() * 4 +
         boundary_.val.size() * 8 + boundary_rows_.size() * 4 + send_index_.size() * 4;
}

}  // namespace pgsim::gpu
