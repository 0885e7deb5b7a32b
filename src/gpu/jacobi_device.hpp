#pragma once
// Device preconditioners with no hierarchy: Jacobi (z = D^-1 r) and none (z = r).
#include <memory>

#include "gpu/device_buffer.hpp"
#include "gpu/device_preconditioner.hpp"
#include "mna/csr.hpp"

namespace pgsim::gpu {

class DeviceJacobi final : public DevicePreconditioner {
 public:
  explicit DeviceJacobi(const CsrMatrix& A);
  void apply(const double* r, double* z, cudaStream_t stream) override;
  std::string name() const override { return "jacobi"; }

 private:
  DeviceBuffer<double> inv_diag_;
};

class DeviceIdentity final : public DevicePreconditioner {
 public:
  explicit DeviceIdentity(int32_t n) : n_(n) {}
  void apply(const double* r, double* z, cudaStream_t stream) override;
  std::string name() const override { return "none"; }

 private:
  int32_t n_;
};

}  // namespace pgsim::gpu
