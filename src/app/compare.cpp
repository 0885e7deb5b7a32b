#include "app/compare.hpp"

#include <algorithm>
#include <cmath>

#include "parser/shown.hpp"

namespace pgsim {
namespace {

constexpr size_t kExamples = 5;  // missing names listed, per side

}  // namespace

MatchedReference match_reference(const Netlist& netlist, const std::vector<NamedValue>& reference) {
  MatchedReference m;
  m.values.reserve(reference.size());
  for (const NamedValue& ref : reference) {
    const uint32_t v = netlist.node_names.find(ref.name);
    if (v != NameTable::npos) {
      m.values.push_back({v, ref.value});
      continue;
    }
    ++m.missing_in_result;
    if (m.missing_examples.size() < kExamples) m.missing_examples.push_back(shown_plain(ref.name) + " (not in the netlist)");
  }
  return m;
}

Comparison compare_voltages(const Netlist& netlist, const std::vector<double>& voltages,
                            const MatchedReference& reference, size_t worst_count) {
  Comparison c;
  c.missing_in_result = reference.missing_in_result;
  c.missing_examples = reference.missing_examples;
  std::vector<uint8_t> seen(netlist.node_count(), 0);
  std::vector<std::pair<double, uint32_t>> errors;
  double sum = 0;
  for (const auto& [v, value] : reference.values) {
    if (seen[v]) continue;  // a name listed twice counts once
    seen[v] = 1;
    if (v == Netlist::ground) continue;
    double err = voltages[v] - value;
    ++c.matched;
    sum += std::abs(err);
    errors.push_back({err, v});
  }
  for (uint32_t v = 1; v < netlist.node_count(); ++v)
    if (!seen[v]) {
      ++c.missing_in_reference;
      if (c.missing_examples.size() < 2 * kExamples)
        c.missing_examples.push_back(shown_plain(netlist.node_names[v]) + " (not in the reference)");
    }
  size_t k = std::min(worst_count, errors.size());
  auto by_size = [](auto& a, auto& b) { return std::abs(a.first) > std::abs(b.first); };
  std::partial_sort(errors.begin(), errors.begin() + static_cast<long>(k), errors.end(), by_size);
  for (size_t i = 0; i < k; ++i)
    c.worst.push_back({std::string(netlist.node_names[errors[i].second]), errors[i].first});
  c.max_abs_error = errors.empty() ? 0.0 : std::abs(errors[0].first);
  c.mean_abs_error = c.matched ? sum / double(c.matched) : 0.0;
  return c;
}

}  // namespace pgsim
