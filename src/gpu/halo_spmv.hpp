#pragma once
// One rank's part of y = G x on the device (the GPU side of dist/partition.hpp's SpMV):
//   compute stream:  pack x[send lists] into one send buffer (a kernel)       --event-->
//   comm stream:                      HaloExchange: every neighbour's values out, the halo in
//   compute stream:  y = interior x (overlaps the exchange)
//   compute stream:  wait for the comm stream; y[boundary_rows[k]] += (boundary halo)[k]
// The exchange is a plug-in: NCCL send/recv between ranks (gpu/nccl_comm.hpp), or in the tests
// a copy of known halo values on one GPU. A block without neighbours is its interior product.
// Everything is issued on streams, with no host synchronization: GpuPcg captures it in a graph.
#include <cuda_runtime_api.h>

#include <memory>
#include <vector>

#include "dist/partition.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/spmv.hpp"

namespace pgsim::gpu {

// Moves the packed send values to the neighbours and their values into the halo, queued on
// `stream`. `send`: every neighbour's values, neighbour after neighbour in RankBlock::neighbors
// order (send_offsets() gives where each begins); `halo`: RankBlock::halo() doubles.
class HaloExchange {
 public:
  virtual ~HaloExchange() = default;
  virtual void exchange(const double* send, double* halo, cudaStream_t stream) = 0;
};

// Where each neighbour's values begin in the packed send buffer: neighbors.size() + 1 offsets.
std::vector<int32_t> send_offsets(const dist::RankBlock& block);

// send[i] = x[index[i]] for i < count (the pack step, exposed for its test).
void pack_send_values(const double* x, const int32_t* index, int32_t count, double* send, cudaStream_t stream);
// y[rows[k]] += sum over row k of B of B(k, h) halo[h] (the boundary step, exposed for its test).
void add_boundary_terms(const DeviceCsr& B, const int32_t* rows, const double* halo, double* y, cudaStream_t stream);

class HaloSpmv final : public DeviceSpmv {
 public:
  // Uploads the block's interior (in `layout`), boundary and send lists. `exchange` must outlive this.
  HaloSpmv(const dist::RankBlock& block, SpmvLayout layout, HaloExchange& exchange);
  ~HaloSpmv() override;
  HaloSpmv(const HaloSpmv&) = delete;
  HaloSpmv& operator=(const HaloSpmv&) = delete;

  void multiply(const double* x, double* y, cudaStream_t stream) override;
  SpmvLayout layout() const override { return interior_->layout(); }
  std::string detail() const override { return interior_->detail(); }
  size_t matrix_bytes() const override;

 private:
  std::unique_ptr<DeviceSpmv> interior_;
  DeviceCsr boundary_;
  DeviceBuffer<int32_t> boundary_rows_, send_index_;
  DeviceBuffer<double> send_, halo_;
  HaloExchange& exchange_;
  bool has_neighbors_;
  cudaStream_t comm_ = nullptr;
  cudaEvent_t packed_ = nullptr, received_ = nullptr;
};

}  // namespace pgsim::gpu
