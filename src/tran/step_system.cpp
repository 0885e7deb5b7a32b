#include "tran/step_system.hpp"

#include <omp.h>

#include <algorithm>
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

}  // namespace

void prepare_sources(Netlist& nl, double tstep, double tstop) {
  for (SourceWaveform& w : nl.transient.waveforms) {
    Element& e = nl.elements[w.element];
    if (e.kind == ElementKind::VoltageSource)
      throw InputError(nl.where(e.where) + ": voltage source '" + std::string(nl.element_names[e.name]) +
                       "' has a time function: transient analysis takes PULSE and PWL on current sources only");
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
    br.offset = r.offset_of_node[e.plus] - r.offset_of_node[e.minus];
    br.g = inductor ? companion.per_inverse_henry / e.value : companion.per_farad * e.value;
    br.inductor = inductor;
    sys.branches.push_back(br);
  }
  for (const SourceWaveform& w : nl.transient.waveforms) {
    const Element& e = nl.elements[w.element];
    sys.sources.push_back({r.unknown_of_node[e.plus], r.unknown_of_node[e.minus], &w.waveform, e.value});
  }
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

void source_changes(const StepSystem& sys, double t, double* changes) {
  const auto ns = std::ptrdiff_t(sys.sources.size());
  // A thread per 2048 sources (tens of us of work): more would cost more in the fork than it saves.
  const int threads = int(std::min<std::ptrdiff_t>(omp_get_max_threads(), std::max<std::ptrdiff_t>(1, ns / 2048)));
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (std::ptrdiff_t k = 0; k < ns; ++k) changes[k] = sys.sources[size_t(k)].change_at(t);
}

void step_rhs(const StepSystem& sys, const std::vector<double>& changes, std::vector<double>& b) {
  b = sys.reduced.b;
  for (size_t k = 0; k < sys.sources.size(); ++k) {
    const TimedSource& s = sys.sources[k];
    stamp_current(b, s.plus, s.minus, changes[k]);
  }
  for (const ReactiveBranch& br : sys.branches) stamp_current(b, br.plus, br.minus, br.history);
}

void advance_history(StepSystem& sys, const std::vector<double>& x) {
  for (ReactiveBranch& br : sys.branches) {
    const double v = branch_voltage(br, x);
    br.current = br.g * v + br.history;
    br.history = history_of(br, v, sys.method);
  }
}

}  // namespace pgsim
