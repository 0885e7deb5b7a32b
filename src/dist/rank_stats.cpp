#include "dist/rank_stats.hpp"

#include <sys/resource.h>

namespace pgsim::dist {

uint64_t peak_host_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<uint64_t>(usage.ru_maxrss) * 1024;  // Linux reports kilobytes
}

}  // namespace pgsim::dist
