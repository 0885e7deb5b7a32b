#pragma once
// Node waveforms in IBM's transient output layout (ibmpg*t.output):
//
//   <empty line>
//   Node: NAME
//   <empty line>
//    0.000e+00 3.541761e-04        one " time value" line per time point (%.3e %.6e)
//    ...
//   END: NAME
//
// repeated per node, in .print order. --compare reads the same layout.
#include <cstdint>
#include <string>
#include <vector>

namespace pgsim {

struct NodeWaveform {
  std::string name;
  std::vector<double> time, value;  // seconds, volts; times increasing
};

void write_waveforms(const std::string& path, const std::vector<NodeWaveform>& waveforms);  // atomically
// Throws ParseError (file:line) on a malformed line, InputError when the file cannot be read.
std::vector<NodeWaveform> read_waveforms(const std::string& path);

// Computed against reference waveforms, nodes matched by name (case-insensitively), at every
// reference point inside the computed time range, the computed value linearly interpolated there.
struct WaveformComparison {
  int64_t nodes = 0;    // matched
  int64_t points = 0;   // compared
  int64_t missing_in_reference = 0, missing_in_result = 0;
  int64_t outside = 0;  // reference points outside the computed time range (not compared)
  double max_abs_error = 0, mean_abs_error = 0;
  std::string worst_node;
  double worst_time = 0;
  double worst_error = 0;  // signed, computed - reference
  std::vector<std::string> missing_examples;
};

WaveformComparison compare_waveforms(const std::vector<NodeWaveform>& computed,
                                     const std::vector<NodeWaveform>& reference);
std::string waveform_comparison_text(const WaveformComparison& c);

}  // namespace pgsim
