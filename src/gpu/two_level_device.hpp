#pragma once
// The two-level preconditioner of dist/two_level.hpp on the device (the distributed GPU solve):
//   B = (I - Q G) M (I - G Q) + Q,   Q = Z E^{-1} Z^T,
// with M the rank's block preconditioner on the device, the coarse operators in the layout of
// dist/coarse_operators.hpp (the CPU path's, step for step), and the coarse solve as the rows of
// E^{-1} this rank reads (E is the same on all ranks: dist/coarse_problem.hpp), applied as
// dense matrix-vector products, so an application is a fixed sequence of kernels and two
// in-stream sums over the ranks, capturable in a CUDA graph:
//   c  = Z^T r                     (own unknowns' rows summed; zeros elsewhere)  sum over ranks (N_c doubles)
//   y1 = E^{-1} c                  (the rows of this rank's positions: own and neighbours' unknowns)
//   u  = r - (G Z) y1              (own coupling per row, then the few rest rows; into z's storage)
//   z  = M u                       (in place: M must allow z == u, as DeviceCmg, which reads u
//                                  into its level-0 vector first and writes z last, and DeviceJacobi do)
//   c  = (G Z)^T z                 (rest^T, then the own unknowns' weighted sums)  sum over ranks (N_c doubles)
//   y2 = E^{-1} c                  (the own rows only);  z += Z (y1 - y2)
// Z^T r sums only this rank's coarse unknowns (the others' entries are 0 before the sum), so one
// all-reduce does what the CPU path's all-gather does.
//
// Device memory per local row: 16 bytes (position, own coupling, member index), where G Z,
// (G Z)^T and Z^T as CSR and u took about 53; E^{-1}: 8 N_c bytes per position, not per coarse
// unknown.
#include <cstdint>
#include <memory>
#include <vector>

#include "dist/coarse_operators.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/device_preconditioner.hpp"
#include "gpu/pcg_gpu.hpp"

namespace pgsim::gpu {

// What the device needs of the coarse problem (dist::CoarseProblem): plain data.
struct CoarseCorrectionData {
  dist::CoarseOperators operators;
  std::vector<double> inverse_rows;  // E^{-1}'s rows of operators.read, row-major: positions x N_c
};

class DeviceTwoLevel final : public DevicePreconditioner {
 public:
  // `across_ranks` must outlive this (the PCG's all-reduce). Requires operators.unknowns > 0
  // and inverse_rows of positions x unknowns entries, and a `local` that may be applied in
  // place (apply(z, z)).
  DeviceTwoLevel(std::unique_ptr<DevicePreconditioner> local, const CoarseCorrectionData& data,
                 DeviceScalarSum& across_ranks);
  void apply(const double* r, double* z, cudaStream_t stream) override;
  std::string name() const override { return local_->name(); }
  std::vector<LevelStats> levels() const override { return local_->levels(); }

 private:
  std::unique_ptr<DevicePreconditioner> local_;
  DeviceScalarSum& across_ranks_;
  int32_t rows_, unknowns_, first_, count_, positions_, rest_rows_count_;
  DeviceBuffer<int32_t> position_of_row_, member_ptr_, members_, rest_rows_, rest_ptr_, rest_col_, restt_ptr_,
      restt_col_;
  DeviceBuffer<double> own_coupling_, rest_val_, restt_val_, inverse_rows_, c_, y1_, y2_;
};

}  // namespace pgsim::gpu
