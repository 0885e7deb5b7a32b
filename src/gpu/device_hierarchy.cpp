#include "gpu/device_hierarchy.hpp"

#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>

#include "gpu/cmg_build.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/gpu_failure.hpp"
#include "gpu/host_staging.hpp"
#include "mna/stopwatch.hpp"

namespace pgsim::gpu {

DeviceHierarchy::DeviceHierarchy() = default;
DeviceHierarchy::DeviceHierarchy(DeviceHierarchy&&) noexcept = default;
DeviceHierarchy& DeviceHierarchy::operator=(DeviceHierarchy&&) noexcept = default;
DeviceHierarchy::~DeviceHierarchy() = default;

std::optional<DeviceHierarchy> DeviceHierarchy::build(const CsrMatrix& A, const CmgOptions& options, int device,
                                                      std::string* detail) {
  if (!builds_on_device(options, A.rows)) return std::nullopt;
  return as_gpu_failure([&] {
    PGSIM_CUDA(cudaSetDevice(device));
    DeviceHierarchy h;
    Stopwatch watch;
    DeviceBuildTimes built;
    double staged = 0;
    {
      const DeviceCsr copy = staged_copy(A);  // returns with the copy done
      staged = watch.lap();
      h.levels_ = std::make_unique<DeviceCmgHierarchy>(build_cmg_hierarchy_on_device(copy.view(), options, &built));
    }
    watch.lap();
    const DeviceCmgHierarchy& d = *h.levels_;
    h.shape_.n = d.n;
    h.shape_.level0_of_unknown = d.level0_of_unknown.download();
    h.shape_.level0_ground = d.level0_ground;
    for (const DeviceCmgLevel& from : d.levels) {
      CmgLevel level;
      level.A.rows = from.A.rows;
      level.cluster_ptr = from.cluster_ptr.download();
      level.repeats = from.repeats;
      h.shape_.levels.push_back(std::move(level));
    }
    if (detail) {
      char copies[2][32];
      std::snprintf(copies[0], sizeof copies[0], "%.3f s", staged);
      std::snprintf(copies[1], sizeof copies[1], "%.3f s", watch.lap());
      *detail = std::string("its matrix copied up in ") + copies[0] + ", CMG built on the device " +
                built.text(d.levels.size()) + ", its shape copied down in " + copies[1];
    }
    return std::optional<DeviceHierarchy>(std::move(h));
  });
}

DeviceCmgHierarchy DeviceHierarchy::take() {
  if (!levels_) throw std::logic_error("DeviceHierarchy::take: the levels were taken already");
  DeviceCmgHierarchy d = std::move(*levels_);
  levels_.reset();
  return d;
}

}  // namespace pgsim::gpu
