#pragma once
#include <string>

namespace pgsim::gpu {

// True when a CUDA device can be used; otherwise `why` says what is missing.
bool device_available(std::string* why);
// "NVIDIA H100 80GB HBM3, 132 SMs, 79.1 GiB" or similar.
std::string device_description();
// "runtime 12.4, driver 12.6": the CUDA runtime pgsim was built with and the installed driver's
// CUDA version ("driver none" without a driver).
std::string cuda_versions();

}  // namespace pgsim::gpu
