#include "app/waveform_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <unordered_map>

#include "app/output_file.hpp"
#include "app/reference_file.hpp"
#include "app/system_error.hpp"
#include "parser/input_error.hpp"
#include "parser/spice_value.hpp"

namespace pgsim {
namespace {

std::string lowered(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

double interpolate(const NodeWaveform& w, double t) {
  auto hi = std::lower_bound(w.time.begin(), w.time.end(), t);
  if (hi == w.time.begin()) return w.value.front();
  if (hi == w.time.end()) return w.value.back();
  const size_t k = static_cast<size_t>(hi - w.time.begin());
  const double t0 = w.time[k - 1], t1 = w.time[k];
  return w.value[k - 1] + (w.value[k] - w.value[k - 1]) * (t - t0) / (t1 - t0);
}

}  // namespace

void write_waveforms(const std::string& path, const std::vector<NodeWaveform>& waveforms) {
  std::string text;
  for (const NodeWaveform& w : waveforms) {
    text += fmt::format("\nNode: {}\n\n", w.name);
    for (size_t k = 0; k < w.time.size(); ++k) text += fmt::format(" {:.3e} {:.6e}\n", w.time[k], w.value[k]);
    text += fmt::format("END: {}\n", w.name);
  }
  OutputFile out(path);
  out.write(text);
  out.commit();
}

std::vector<NodeWaveform> read_waveforms(const std::string& path) {
  std::ifstream in = open_reference_file(path, "waveform file");
  std::vector<NodeWaveform> out;
  bool open = false;
  std::string line;
  unsigned number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::istringstream fields(line);
    std::string first, second;
    if (!(fields >> first)) continue;
    fields >> second;
    if (first == "Node:" || first == "END:") {
      if (second.empty()) throw ParseError(path, number, "'" + first + "' without a node name");
      if (first == "Node:") {
        if (open) throw ParseError(path, number, "'Node: " + second + "' before 'END: " + out.back().name + "'");
        out.push_back({second, {}, {}});
      } else if (!open || lowered(second) != lowered(out.back().name)) {
        throw ParseError(path, number, "'END: " + second + "' does not close an open 'Node:'");
      }
      open = first == "Node:";
      continue;
    }
    if (!open) throw ParseError(path, number, "expected 'Node: NAME', got '" + line + "'");
    const auto t = parse_spice_value(first), v = parse_spice_value(second);
    std::string extra;
    if (!t || !v || (fields >> extra)) throw ParseError(path, number, "expected 'time value', got '" + line + "'");
    NodeWaveform& w = out.back();
    if (!w.time.empty() && *t <= w.time.back()) throw ParseError(path, number, "times must increase");
    w.time.push_back(*t);
    w.value.push_back(*v);
  }
  if (in.bad()) throw SystemError("cannot read waveform file '" + path + "'");
  if (open) throw ParseError(path, number, "'Node: " + out.back().name + "' is not closed by 'END:'");
  if (out.empty()) throw InputError(path + ": no 'Node: NAME' sections: not a waveform file (IBM .output layout)?");
  return out;
}

WaveformComparison compare_waveforms(const std::vector<NodeWaveform>& computed,
                                     const std::vector<NodeWaveform>& reference) {
  constexpr size_t kMissingExamples = 5;
  WaveformComparison c;
  std::unordered_map<std::string, const NodeWaveform*> by_name;
  for (const NodeWaveform& w : computed) by_name.emplace(lowered(w.name), &w);
  std::unordered_map<std::string, bool> referenced;
  double sum = 0;
  for (const NodeWaveform& ref : reference) {
    referenced[lowered(ref.name)] = true;
    auto it = by_name.find(lowered(ref.name));
    if (it == by_name.end()) {
      ++c.missing_in_result;
      if (c.missing_examples.size() < kMissingExamples) c.missing_examples.push_back(ref.name + " (not printed)");
      continue;
    }
    const NodeWaveform& w = *it->second;
    ++c.nodes;
    // Inside the computed range, with slack for times printed to 4 digits.
    const double slack = 1e-3 * (w.time.size() > 1 ? w.time[1] - w.time[0] : 0.0);
    for (size_t k = 0; k < ref.time.size(); ++k) {
      const double t = ref.time[k];
      if (w.time.empty() || t < w.time.front() - slack || t > w.time.back() + slack) {
        ++c.outside;
        continue;
      }
      const double err = interpolate(w, t) - ref.value[k];
      ++c.points;
      sum += std::abs(err);
      if (std::abs(err) > c.max_abs_error) {
        c.max_abs_error = std::abs(err);
        c.worst_error = err, c.worst_node = w.name, c.worst_time = t;
      }
    }
  }
  for (const NodeWaveform& w : computed)
    if (!referenced.count(lowered(w.name))) {
      ++c.missing_in_reference;
      if (c.missing_examples.size() < kMissingExamples) c.missing_examples.push_back(w.name + " (not in the reference)");
    }
  c.mean_abs_error = c.points ? sum / static_cast<double>(c.points) : 0.0;
  return c;
}

std::string waveform_comparison_text(const WaveformComparison& c) {
  std::string s = fmt::format("compare: {} nodes, {} points, max |error| {:.3e} V, mean |error| {:.3e} V\n", c.nodes,
                              c.points, c.max_abs_error, c.mean_abs_error);
  if (c.points) s += fmt::format("  worst: {} at t = {:.4e} s, {:+.3e} V\n", c.worst_node, c.worst_time, c.worst_error);
  if (c.outside) s += fmt::format("  {} reference points lie outside the computed time range (not compared)\n", c.outside);
  if (c.missing_in_reference || c.missing_in_result) {
    s += fmt::format("  missing: {} printed nodes not in the reference, {} reference nodes not printed\n",
                     c.missing_in_reference, c.missing_in_result);
    for (const auto& m : c.missing_examples) s += "    " + m + "\n";
  }
  return s;
}

}  // namespace pgsim
