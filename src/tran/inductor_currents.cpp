#include "tran/inductor_currents.hpp"

#include <cstdint>

#include "parser/input_error.hpp"

namespace pgsim {
namespace {

bool is_dc_short(const Element& e) {
  return e.kind == ElementKind::VoltageSource || e.kind == ElementKind::Inductor ||
         (e.kind == ElementKind::Resistor && e.value == 0.0);
}

}  // namespace

std::vector<double> inductor_dc_currents(const Netlist& nl, const std::vector<double>& v) {
  const size_t n = nl.node_count();
  // leaving[u]: current that must leave node u through its shorts (what resistors and current
  // sources do not carry away), less what resolved shorts already carry.
  std::vector<double> leaving(n, 0.0);
  std::vector<uint32_t> degree(n, 0);
  std::vector<uint32_t> first(n + 1, 0);
  for (const Element& e : nl.elements) {
    double i = 0;  // from plus to minus through e
    if (e.kind == ElementKind::Resistor && e.value > 0) i = (v[e.plus] - v[e.minus]) / e.value;
    else if (e.kind == ElementKind::CurrentSource) i = e.value;
    leaving[e.plus] -= i, leaving[e.minus] += i;
    if (is_dc_short(e) && e.plus != e.minus) ++degree[e.plus], ++degree[e.minus];
  }
  for (size_t u = 0; u < n; ++u) first[u + 1] = first[u] + degree[u];
  std::vector<uint32_t> incident(first[n]), fill(first.begin(), first.end() - 1);
  for (uint32_t k = 0; k < nl.elements.size(); ++k) {
    const Element& e = nl.elements[k];
    if (is_dc_short(e) && e.plus != e.minus) incident[fill[e.plus]++] = k, incident[fill[e.minus]++] = k;
  }

  std::vector<double> current(nl.elements.size(), 0.0);
  std::vector<char> resolved(nl.elements.size(), 0);
  std::vector<uint32_t> leaves;
  for (uint32_t u = 0; u < n; ++u)
    if (degree[u] == 1) leaves.push_back(u);
  while (!leaves.empty()) {
    const uint32_t u = leaves.back();
    leaves.pop_back();
    if (degree[u] != 1) continue;
    uint32_t k = 0;
    for (uint32_t s = first[u]; s < first[u + 1]; ++s)
      if (!resolved[incident[s]]) k = incident[s];
    const Element& e = nl.elements[k];
    const double out = leaving[u];  // leaves u through k
    current[k] = e.plus == u ? out : -out;
    resolved[k] = 1;
    const uint32_t w = e.plus == u ? e.minus : e.plus;
    leaving[u] = 0, leaving[w] += out;
    --degree[u];
    if (--degree[w] == 1) leaves.push_back(w);
  }
  for (uint32_t k = 0; k < nl.elements.size(); ++k) {
    const Element& e = nl.elements[k];
    if (e.kind != ElementKind::Inductor) current[k] = 0.0;
    else if (!resolved[k] && e.plus != e.minus)
      throw InputError(nl.where(e.where()) + ": inductor '" + std::string(nl.element_names[k]) +
                       "' lies in a loop of inductors, voltage sources and shorts, so its DC current "
                       "(the transient's starting point) is not determined");
  }
  return current;
}

}  // namespace pgsim
