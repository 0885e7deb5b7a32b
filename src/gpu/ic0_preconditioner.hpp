#pragma once
// IC(0) on the device: the factor is computed on the CPU (pcg/ic0.hpp), uploaded once, and
// applied as z = L^{-T} L^{-1} r with two SpTrsv solves. With the colored method the system is
// first reordered by a greedy colouring so that each colour is one launch; r and z stay in the
// caller's order (gathered and scattered on the device).
#include <memory>
#include <optional>

#include "gpu/device_buffer.hpp"
#include "gpu/device_preconditioner.hpp"
#include "gpu/sptrsv.hpp"
#include "mna/csr.hpp"

namespace pgsim::gpu {

class Ic0DevicePreconditioner : public DevicePreconditioner {
 public:
  Ic0DevicePreconditioner(const CsrMatrix& G, TrsvMethod method);
  void apply(const double* r, double* z, cudaStream_t stream) override;
  std::string name() const override { return "ic0"; }

  TrsvMethod method() const { return lower_->method(); }
  int32_t colors() const { return colors_; }  // 0 unless colour-ordered

 private:
  int32_t n_ = 0;
  int32_t colors_ = 0;
  std::optional<DeviceBuffer<int32_t>> order_;  // colour order: new row i is old row order_[i]
  std::unique_ptr<SpTrsv> lower_, upper_;
  DeviceBuffer<double> r_ordered_, y_, z_ordered_;
};

}  // namespace pgsim::gpu
