#pragma once
// The two-level preconditioner of dist/two_level.hpp on the device (the distributed GPU solve):
//   B = (I - Q G) M (I - G Q) + Q,   Q = Z E^{-1} Z^T,
// with M the rank's block preconditioner on the device, and the coarse solve E^{-1} a dense
// inverse held by every rank (E is the same on all: dist/coarse_problem.hpp), applied as one
// dense matrix-vector product, so an application is a fixed sequence of kernels and two
// in-stream sums over the ranks, capturable in a CUDA graph:
//   c  = Z^T r                     (CSR, own coarse unknowns)       sum over ranks (N_c doubles)
//   y1 = E^{-1} c                  (dense)
//   u  = r - (G Z) y1              (CSR + subtract)
//   z  = M u
//   c  = (G Z)^T z                 (CSR of the transpose)           sum over ranks (N_c doubles)
//   y2 = E^{-1} c;  z += Z (y1 - y2)
// Z^T r sums only this rank's coarse unknowns (the others' entries are 0 before the sum), so one
// all-reduce does what the CPU path's all-gather does.
#include <cstdint>
#include <memory>
#include <vector>

#include "gpu/device_buffer.hpp"
#include "gpu/device_preconditioner.hpp"
#include "gpu/pcg_gpu.hpp"
#include "gpu/spmv.hpp"
#include "mna/csr.hpp"

namespace pgsim::gpu {

// What the device needs of the coarse problem (dist::CoarseProblem): plain data.
struct CoarseCorrectionData {
  int32_t unknowns = 0;                 // N_c, the coarse unknowns of all ranks
  std::vector<int32_t> unknown_of_row;  // per local row: its global coarse unknown, or -1
  CsrMatrix gz;                         // this rank's rows of G Z (rows x N_c)
  CsrMatrix zt, gzt;                    // Z^T and (G Z)^T (N_c x rows): dist::CoarseProblem's z_transposed(),
                                        // gz_transposed()
  std::vector<double> e_inverse;        // E^{-1}, N_c x N_c (symmetric)
};

// Largest N_c whose dense inverse is kept on the device (8 N_c^2 bytes: 2 GiB at 16384).
constexpr int32_t kMaxDeviceCoarseUnknowns = 16384;

class DeviceTwoLevel final : public DevicePreconditioner {
 public:
  // `across_ranks` must outlive this (the PCG's all-reduce). Requires data.unknowns > 0.
  DeviceTwoLevel(std::unique_ptr<DevicePreconditioner> local, const CoarseCorrectionData& data,
                 DeviceScalarSum& across_ranks);
  void apply(const double* r, double* z, cudaStream_t stream) override;
  std::string name() const override { return local_->name(); }
  std::vector<LevelStats> levels() const override { return local_->levels(); }

 private:
  std::unique_ptr<DevicePreconditioner> local_;
  DeviceScalarSum& across_ranks_;
  int32_t rows_, unknowns_;
  std::unique_ptr<DeviceSpmv> zt_, gz_, gzt_;  // Z^T, G Z, (G Z)^T as CSR
  DeviceBuffer<int32_t> unknown_of_row_;
  DeviceBuffer<double> e_inverse_, c_, y1_, y2_, u_;
};

}  // namespace pgsim::gpu
