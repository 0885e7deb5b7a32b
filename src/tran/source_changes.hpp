#pragma once
// S(t)'s values (tran/step_system.hpp): per current source k with a waveform, its change since
// t = 0, TimedSource::change_at(t). A PULSE source spends most of a run resting at v1
// (ibmpg1t's: 93% of the time), so each source's value is kept with the time until which its
// waveform holds it (Waveform::held_until) and evaluated again only after that: a step then
// costs a comparison per resting source instead of a PULSE evaluation. ibmpg1t's 10,774
// sources: 9.4% of the evaluations are left, 65-89 us a step against 146-156 us for every
// source on the 2-core development VM (one process), 62 us on one thread of the H100 machine and
// 17 us on 10 (benchmarks/tran/README.md).
#include <vector>

#include "tran/step_system.hpp"

namespace pgsim {

class SourceChanges {
 public:
  explicit SourceChanges(const StepSystem& system);
  // changes[k] = system.sources[k].change_at(t) for every k, bit for bit, on `threads` threads.
  // Times may come in any order; going back in time starts the schedule afresh.
  void at(double t, double* changes, int threads = 1);

 private:
  const StepSystem& system_;
  std::vector<double> value_, until_;  // per source: its change, valid for times in [last, until)
  double last_ = 0;
};

}  // namespace pgsim
