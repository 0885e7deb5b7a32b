#include "tran/source_changes.hpp"

#include <cstddef>
#include <limits>

namespace pgsim {

SourceChanges::SourceChanges(const StepSystem& system)
    : system_(system),
      value_(system.sources.size(), 0.0),
      until_(system.sources.size(), -std::numeric_limits<double>::infinity()) {}

void SourceChanges::at(double t, double* changes, int threads) {
  if (t < last_) until_.assign(until_.size(), -std::numeric_limits<double>::infinity());
  last_ = t;
  const auto n = std::ptrdiff_t(value_.size());
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (std::ptrdiff_t i = 0; i < n; ++i) {
    const size_t k = size_t(i);
    if (!(t < until_[k])) {
      const TimedSource& s = system_.sources[k];
      value_[k] = s.change_at(t);
      until_[k] = s.waveform->held_until(t);
    }
    changes[k] = value_[k];
  }
}

}  // namespace pgsim
