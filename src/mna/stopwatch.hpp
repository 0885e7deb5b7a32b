#pragma once
// Wall-clock phase timing for the pipeline's reports (pgsim's phases, the CMG build, the upload).
#include <chrono>

namespace pgsim {

class Stopwatch {
 public:
  // Seconds since the previous lap (or construction).
  double lap() {
    const auto now = std::chrono::steady_clock::now();
    const double s = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    return s;
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

}  // namespace pgsim
