#include "tran/step_system.hpp"

#include <algorithm>
#include <cstddef>
#include <cstddef>

#include "parser/input_error.hpp"
#include "tran/companion.hpp"
#include "tran/inductor_currents.hpp"

namespace pgsim {
namespace {

Companion companion_of(Integration method, double h) {
  return method == Integration::Trapezoidal ? Companion{2.0 / h, h / 2.0} : Companion{1.0 / h, h};
}

double history_of(const ReactiveBranch& br, double v, Integration method) {
  return companion_history(br.inductor, method == Integration::Trapezoidal, br.g, v, br.current);
}

double branch_voltage(const ReactiveBranch& br, const std::vector<double>& x) {
  return pgsim::branch_voltage(br.plus, br.minus, br.offset, x.data());
}

// b[plus] -= i, b[minus] += i: a current i leaving the plus end through the element.
void stamp_current(std::vector<double>& b, int32_t plus, int32_t minus, double i) {
  if (plus >= 0) b[plus] -= i;
  if (minus >= 0) b[minus] += i;
}

// Fills sys.voltages and sys.moving (tran/step_system.hpp): one reduce() per voltage source with a
// waveform, on a copy of the netlist with only that source at 1 V.
void add_timed_voltages(StepSystem& sys, const Netlist& nl, const Companion& companion) {
  const auto& waves = nl.transient.waveforms;
  if (std::none_of(waves.begin(), waves.end(), [&](const SourceWaveform& w) {
        return nl.elements[w.element].kind == ElementKind::VoltageSource;
      }))
    return;  // no copy of the netlist
  Netlist unit = nl;
  for (Element& e : unit.elements)
    if (e.kind == ElementKind::VoltageSource || e.kind == ElementKind::CurrentSource) e.value = 0;
  std::vector<int32_t> moving_of_node(nl.node_count(), -1);
  std::vector<int32_t> moved_branch(sys.branches.size(), 0);
  for (const SourceWaveform& w : nl.transient.waveforms) {
    const Element& source = nl.elements[w.element];
    if (source.kind != ElementKind::VoltageSource) continue;
    unit.elements[w.element].value = 1.0;
    ReducedSystem per_volt;
    try {
      per_volt = reduce(unit, &companion);
    } catch (const InputError& e) {  // a loop of sources: agreeing at t = 0, not once this one moves
      throw InputError(nl.where(source.where()) + ": voltage source '" + std::string(nl.element_names[w.element]) +
                       "' has a waveform but lies in a loop of voltage sources and shorts, which its moving value "
                       "would break (with only it at 1 V: " + e.what() + ")");
    }
    unit.elements[w.element].value = 0.0;
    TimedVoltage v;
    v.waveform = &w.waveform;
    v.initial = source.value;
    for (int32_t u = 0; u < per_volt.unknowns(); ++u)
      if (per_volt.b[size_t(u)] != 0) v.rhs.emplace_back(u, per_volt.b[size_t(u)]);
    for (uint32_t node = 0; node < nl.node_count(); ++node) {
      const double d = per_volt.offset_of_node[node];
      if (d == 0) continue;
      if (moving_of_node[node] < 0) {
        moving_of_node[node] = int32_t(sys.moving.size());
        const double offset = sys.reduced.offset_of_node[node];
        sys.moving.push_back({node, sys.reduced.unknown_of_node[node], offset, offset});
      }
      v.nodes.emplace_back(uint32_t(moving_of_node[node]), d);
    }
    for (uint32_t k = 0; k < sys.branches.size(); ++k) {
      const Element& e = nl.elements[sys.branches[k].element];
      const double d = per_volt.offset_of_node[e.plus] - per_volt.offset_of_node[e.minus];
      if (d == 0) continue;
      if (!moved_branch[k]) sys.moving_branches.push_back(k);
      moved_branch[k] = 1;
      v.branches.emplace_back(k, d);
    }
    sys.voltages.push_back(std::move(v));
  }
}

}  // namespace

void prepare_sources(Netlist& nl, double tstep, double tstop) {
  for (SourceWaveform& w : nl.transient.waveforms) {
    Element& e = nl.elements[w.element];
    w.waveform.resolve_defaults(tstep, tstop);
    e.value = w.waveform.at(0.0);
  }
}

StepSystem build_step_system(const Netlist& nl, Integration method, double h) {
  StepSystem sys;
  sys.method = method;
  sys.h = h;
  const Companion companion = companion_of(method, h);
  sys.reduced = reduce(nl, &companion);
  const ReducedSystem& r = sys.reduced;
  for (uint32_t k = 0; k < nl.elements.size(); ++k) {
    const Element& e = nl.elements[k];
    const bool inductor = e.kind == ElementKind::Inductor;
    if (!(e.value > 0) || (!inductor && e.kind != ElementKind::Capacitor)) continue;
    ReactiveBranch br;
    br.element = k;
    br.plus = r.unknown_of_node[e.plus], br.minus = r.unknown_of_node[e.minus];
    // As reduce() stamps: nothing between fixed nodes or within one super-node, which no
    // unknown's voltage depends on.
    if (br.plus == br.minus) continue;
    br.offset = br.initial_offset = r.offset_of_node[e.plus] - r.offset_of_node[e.minus];
    br.g = inductor ? companion.per_inverse_henry / e.value : companion.per_farad * e.value;
    br.inductor = inductor;
    sys.branches.push_back(br);
  }
  for (const SourceWaveform& w : nl.transient.waveforms) {
    const Element& e = nl.elements[w.element];
    if (e.kind == ElementKind::VoltageSource) continue;  // add_timed_voltages
    sys.sources.push_back({r.unknown_of_node[e.plus], r.unknown_of_node[e.minus], &w.waveform, e.value});
  }
  add_timed_voltages(sys, nl, companion);
  return sys;
}

void start_from_dc(StepSystem& sys, const Netlist& nl, const std::vector<double>& dc_voltages,
                   std::vector<double>& x0) {
  const ReducedSystem& r = sys.reduced;
  x0.resize(static_cast<size_t>(r.unknowns()));
  for (int32_t u = 0; u < r.unknowns(); ++u) x0[u] = dc_voltages[r.node_of_unknown[u]];
  const std::vector<double> inductor = inductor_dc_currents(nl, dc_voltages);
  for (ReactiveBranch& br : sys.branches) {
    br.current = br.inductor ? inductor[br.element] : 0.0;
    br.history = history_of(br, branch_voltage(br, x0), sys.method);
  }
}

void move_offsets(StepSystem& sys, double t, std::vector<double>& voltage_changes) {
  voltage_changes.resize(sys.voltages.size());
  for (MovingNode& m : sys.moving) m.offset = m.initial_offset;
  for (uint32_t k : sys.moving_branches) sys.branches[k].offset = sys.branches[k].initial_offset;
  for (size_t k = 0; k < sys.voltages.size(); ++k) {
    const TimedVoltage& v = sys.voltages[k];
    const double dv = voltage_changes[k] = v.change_at(t);
    for (const auto& [m, d] : v.nodes) sys.moving[m].offset += dv * d;
    for (const auto& [br, d] : v.branches) sys.branches[br].offset += dv * d;
  }
}

void step_rhs(const StepSystem& sys, const std::vector<double>& changes, const std::vector<double>& voltage_changes,
              std::vector<double>& b) {
  b = sys.reduced.b;
  for (size_t k = 0; k < sys.voltages.size(); ++k)
    for (const auto& [u, db] : sys.voltages[k].rhs) b[size_t(u)] += voltage_changes[k] * db;
  for (size_t k = 0; k < sys.sources.size(); ++k) {
    const TimedSource& s = sys.sources[k];
    stamp_current(b, s.plus, s.minus, changes[k]);
  }
  for (const ReactiveBranch& br : sys.branches) stamp_current(b, br.plus, br.minus, br.history);
}

void advance_history(StepSystem& sys, const std::vector<double>& x, int threads) {
  const auto n = std::ptrdiff_t(sys.branches.size());
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (std::ptrdiff_t k = 0; k < n; ++k) {
    ReactiveBranch& br = sys.branches[size_t(k)];
    const double v = branch_voltage(br, x);
    br.current = br.g * v + br.history;
    br.history = history_of(br, v, sys.method);
  }
}

}  // namespace pgsim
