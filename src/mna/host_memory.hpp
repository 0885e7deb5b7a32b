#pragma once
// The process's resident host memory, for the -v phase log and the JSON summary's peak.
#include <cstdint>

namespace pgsim {

struct HostMemory {
  uint64_t resident = 0;  // bytes now (VmRSS)
  uint64_t peak = 0;      // bytes at the peak so far (VmHWM)
};

// From /proc/self/status; zeros where it cannot be read (not Linux).
HostMemory host_memory();

}  // namespace pgsim
