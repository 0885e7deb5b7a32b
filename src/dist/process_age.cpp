#include "dist/process_age.hpp"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace pgsim::dist {

double process_age_seconds() {
  std::ifstream stat("/proc/self/stat"), uptime_file("/proc/uptime");
  std::string line;
  double uptime = 0;
  if (!std::getline(stat, line) || !(uptime_file >> uptime)) return -1;
  // The start time is field 22; fields are counted past the command name's closing parenthesis
  // (field 2, which may hold spaces), after which field 3 begins.
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream fields(line.substr(close + 1));
  std::string skipped;
  for (int field = 3; field < 22; ++field) fields >> skipped;
  unsigned long long start_ticks = 0;
  const long ticks_per_second = sysconf(_SC_CLK_TCK);
  if (!(fields >> start_ticks) || ticks_per_second <= 0) return -1;
  return uptime - double(start_ticks) / double(ticks_per_second);
}

}  // namespace pgsim::dist
