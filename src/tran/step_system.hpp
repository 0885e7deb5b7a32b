#pragma once
// Transient analysis: the contract. Fixed steps h from the DC operating point, trapezoidal (TR)
// or backward Euler (BE). Every part of src/tran (and a GPU back end) answers to this header.
//
// Unknowns. reduce(netlist, &companion) with Companion{per_farad = a, per_inverse_henry = c}:
// voltage sources and 0-ohm shorts merge nodes into super-nodes exactly as at DC, but an
// inductor no longer does: its two ends are separate unknowns (or fixed nodes) joined by its
// companion conductance. So a DC super-node made of inductors splits into several step unknowns;
// the DC solution gives every netlist node's voltage, from which each step unknown (a node of
// the step system, offset 0 there) takes its initial value.
//
// Step equation, for t_{n+1} = (n+1) h:     A x_{n+1} = b0 + S(t_{n+1}) + H_n
//   A     the step matrix: resistors, a*C for each capacitor, c/L for each inductor, where
//         TR: a = 2/h, c = h/2;   BE: a = 1/h, c = h.  SDD, symmetric, the same every step.
//   b0    reduce()'s right-hand side: sources at their t = 0 values (fixed-node terms of every
//         conductance, current sources).
//   S(t)  for each current source with a waveform: (I(t) - I(0)) stamped like a current source
//         (minus at its plus unknown, plus at its minus unknown).
//   H_n   for each capacitor and inductor k, its history current hist_k, stamped the same way.
// With v_k = V(plus) - V(minus) and i_k the current from plus to minus through element k,
// g_k its companion conductance, every step has i_k(n+1) = g_k v_k(n+1) + hist_k(n), where
//   capacitor TR: hist = -(g v_n + i_n)    BE: hist = -g v_n
//   inductor  TR: hist = i_n + g v_n       BE: hist = i_n
// Initial state (t = 0): the DC operating point (C open, L short, sources at t = 0); capacitor
// currents 0; inductor currents from Kirchhoff's current law on the DC solution
// (tran/inductor_currents.hpp).
//
// Voltage sources with a waveform (pads whose value moves): b0 and the nodes' offsets are linear
// in the sources, so one reduce() with only source k at 1 V (every other source, current sources
// included, at 0) gives db_k and each node's offset per volt of source k. Then at time t
//   b      += sum_k (V_k(t) - V_k(0)) db_k            (a term of S(t))
//   offset += sum_k (V_k(t) - V_k(0)) d offset_k      (moving nodes and the branches between them)
// and the offsets at t enter the branches' voltages (history), the probes and the worst drop.
// The cost: a copy of the netlist and one reduce() per such source when the step system is
// built. Only the CPU engine (tran/stepper.hpp's CpuStepper) takes them: app/backend.hpp keeps a
// run with them off the GPU stepper, which reads neither `voltages` nor `moving`.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "mna/reduce.hpp"
#include "parser/netlist.hpp"

namespace pgsim {

enum class Integration : uint8_t { Trapezoidal, BackwardEuler };

// One capacitor or inductor of the step system. An end whose voltage a source fixes has
// unknown -1; `offset` is V(plus) - V(minus) minus the unknowns' part, so
// v = x[plus] - x[minus] + offset (absent unknowns read as 0).
struct ReactiveBranch {
  uint32_t element = 0;  // index into Netlist::elements
  int32_t plus = -1, minus = -1;
  double offset = 0;     // at the current time (moves with voltage sources' waveforms)
  double initial_offset = 0;  // at t = 0
  double g = 0;          // companion conductance
  bool inductor = false;
  double current = 0;    // i_n
  double history = 0;    // hist_n: the next step's history current
};

// A current source whose value follows a waveform.
struct TimedSource {
  int32_t plus = -1, minus = -1;  // unknowns of its ends (-1: fixed node)
  const Waveform* waveform = nullptr;
  double initial = 0;             // I(0), already in b0

  double change_at(double t) const { return waveform->at(t) - initial; }  // its term of S(t)
};

// A netlist node whose offset moves with some voltage source's waveform: its voltage is
// x[unknown] + offset (offset alone when unknown is -1).
struct MovingNode {
  uint32_t node = 0;
  int32_t unknown = -1;
  double initial_offset = 0, offset = 0;  // at t = 0 and at the current time
};

// A voltage source whose value follows a waveform: its change per volt of b, of the moving nodes'
// offsets and of the branches' offsets (the header's comment), each a sparse list.
struct TimedVoltage {
  const Waveform* waveform = nullptr;
  double initial = 0;  // V(0), already in b0 and the offsets
  std::vector<std::pair<int32_t, double>> rhs;        // (unknown, db per volt)
  std::vector<std::pair<uint32_t, double>> nodes;     // (index into StepSystem::moving, per volt)
  std::vector<std::pair<uint32_t, double>> branches;  // (index into StepSystem::branches, per volt)

  double change_at(double t) const { return waveform->at(t) - initial; }
};

struct StepSystem {
  ReducedSystem reduced;  // A = reduced.G, b0 = reduced.b, node mapping (offsets at t = 0) for output
  std::vector<ReactiveBranch> branches;
  std::vector<TimedSource> sources;  // current sources with a waveform
  std::vector<TimedVoltage> voltages;
  std::vector<MovingNode> moving;
  std::vector<uint32_t> moving_branches;  // the branches some TimedVoltage moves
  Integration method = Integration::Trapezoidal;
  double h = 0;
};

// The netlist's sources set to their t = 0 values (Element::value), PULSE defaults resolved
// against (tstep, tstop).
void prepare_sources(Netlist& netlist, double tstep, double tstop);

// Builds the step system for step h (prepare_sources first).
StepSystem build_step_system(const Netlist& netlist, Integration method, double h);

// Sets every branch's current to its t = 0 value and computes the first history currents.
// dc_voltages: every netlist node's DC voltage; x0 (out): the step unknowns at t = 0.
void start_from_dc(StepSystem& system, const Netlist& netlist, const std::vector<double>& dc_voltages,
                   std::vector<double>& x0);

// Moves the offsets of the moving nodes and branches to time t (before advance_history at t);
// voltage_changes (out, one per TimedVoltage): V_k(t) - V_k(0), for step_rhs.
void move_offsets(StepSystem& system, double t, std::vector<double>& voltage_changes);

// The right-hand side of the step to time t (b0 + S(t) + H_n), changes: S(t) (SourceChanges),
// voltage_changes: move_offsets' at t.
void step_rhs(const StepSystem& system, const std::vector<double>& changes,
              const std::vector<double>& voltage_changes, std::vector<double>& b);

// After the step's solve: i_{n+1} and hist_{n+1} of every branch from x_{n+1}, on `threads` threads.
void advance_history(StepSystem& system, const std::vector<double>& x, int threads = 1);

}  // namespace pgsim
