#include "mna/host_memory.hpp"

#include <fstream>
#include <string>

namespace pgsim {

HostMemory host_memory() {
  HostMemory m;
  std::ifstream status("/proc/self/status");
  std::string key;
  uint64_t kib = 0;
  // Lines "VmRSS:    1234 kB"; other lines are skipped.
  while (status >> key) {
    if (key == "VmRSS:" && status >> kib) m.resident = kib * 1024;
    if (key == "VmHWM:" && status >> kib) m.peak = kib * 1024;
    status.ignore(4096, '\n');
  }
  return m;
}

}  // namespace pgsim
