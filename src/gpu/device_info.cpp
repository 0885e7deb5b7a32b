#include "gpu/device_info.hpp"

#include <cuda_runtime_api.h>

#include <cstdio>

namespace pgsim::gpu {

bool device_available(std::string* why) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    if (why) *why = err != cudaSuccess ? cudaGetErrorString(err) : "no CUDA device found";
    cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return false;
  }
  return true;
}

std::string device_description() {
  cudaDeviceProp prop{};
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess) return "unknown device";
  char text[640];
  std::snprintf(text, sizeof text, "%s, %d SMs, %.1f GiB", prop.name, prop.multiProcessorCount,
                double(prop.totalGlobalMem) / (1u << 30));
  return text;
}

std::string cuda_versions() {
  int runtime = 0, driver = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);  // 0 when no driver is installed
  auto text = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
  return "runtime " + text(runtime) + ", driver " + (driver ? text(driver) : std::string("none"));
}

}  // namespace pgsim::gpu
