#include "app/version.hpp"

#include <fmt/format.h>
#include <omp.h>

#include "git_commit.hpp"  // generated at every build (cmake/GitCommit.cmake)
#ifdef PGSIM_HAVE_CUDA
#include "gpu/device_info.hpp"
#endif

namespace pgsim {
namespace {

std::string cuda_text() {
#ifdef PGSIM_HAVE_CUDA
  std::string why;
  const std::string device = gpu::device_available(&why) ? "device " + gpu::device_description() : "no device (" + why + ")";
  return gpu::cuda_versions() + "; " + device;
#else
  return "not built";
#endif
}

}  // namespace

std::string version_text() {
  return fmt::format("pgsim {}\ncommit:     {}\nbuild type: {}\nCUDA:       {}\nOpenMP:     {} threads", PGSIM_VERSION,
                     PGSIM_GIT_COMMIT, PGSIM_BUILD_TYPE, cuda_text(), omp_get_max_threads());
}

}  // namespace pgsim
