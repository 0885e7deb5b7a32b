#pragma once
// A CMG hierarchy built on a GPU and kept there (gpu/cmg_build.hpp), for host code that holds it
// until a device solve takes it (a rank's block in the distributed solve, gpu/distributed_pcg.hpp),
// with the host's copy of its shape: what the distributed coarse space reads of a hierarchy
// (dist/coarse_space.hpp). Plain C++ (no CUDA headers), like gpu_solver.hpp.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "cmg/builder.hpp"
#include "cmg/hierarchy.hpp"
#include "mna/csr.hpp"

namespace pgsim::gpu {

struct DeviceCmgHierarchy;

class DeviceHierarchy {
 public:
  // build_cmg_hierarchy(A, options) made on `device` (made the calling thread's current device)
  // from a copy of A, bit for bit; nullopt where the device does not build this one (the
  // Gauss-Seidel smoother, a system that small: builds_on_device). GpuFailure on a CUDA failure.
  // detail (-v), where not null and the device built it: the seconds of A's copy up, of the build
  // (its steps) and of the shape's copy down.
  static std::optional<DeviceHierarchy> build(const CsrMatrix& A, const CmgOptions& options, int device,
                                              std::string* detail = nullptr);

  DeviceHierarchy(DeviceHierarchy&&) noexcept;
  DeviceHierarchy& operator=(DeviceHierarchy&&) noexcept;
  ~DeviceHierarchy();

  // The hierarchy's numberings and sizes: n, level0_of_unknown, level0_ground, and every level's
  // A.rows and cluster_ptr (its matrices, weights and coarse factor are on the device only).
  const CmgHierarchy& shape() const { return shape_; }
  // The levels on the device, given up (to make_device_cmg); shape() stays.
  DeviceCmgHierarchy take();

 private:
  DeviceHierarchy();
  std::unique_ptr<DeviceCmgHierarchy> levels_;
  CmgHierarchy shape_;
};

}  // namespace pgsim::gpu
