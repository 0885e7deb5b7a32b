// Transient analysis (tran/step_system.hpp): the parser's waveform, .tran and .print tables;
// RC and RL circuits against their analytic responses; ibmpg1t against IBM's waveforms.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <nlohmann/json.hpp>

#include "app/exit_codes.hpp"
#include "app/waveform_file.hpp"
#include "mna/chain_elimination.hpp"
#include "mna/reduce.hpp"
#include "parser/input_error.hpp"
#include "parser/netlist.hpp"
#include "pcg/pcg_cpu.hpp"
#include "test_util.hpp"
#include "transient_test_util.hpp"
#include "tran/integrate.hpp"
#include "tran/source_changes.hpp"
#include "tran/step_solver.hpp"
#include "tran/step_system.hpp"

using namespace pgsim;

namespace {

Netlist parse(const std::string& text) { return parse_netlist_text(text, "t.sp"); }

// Runs a whole transient on the CPU and returns the voltage of `node` at every step; the direct
// solver unless `pcg` (CMG, chains eliminated, warm-started).
std::vector<double> simulate(Netlist nl, const std::string& node, Integration method, double h, bool pcg = false) {
  const TranSpec spec = *nl.transient.tran;
  std::vector<double> x;
  StepSystem step = test::started_step_system(nl, method, h, x);
  SolveControl control;
  control.tolerance = 1e-12;
  std::unique_ptr<StepSolver> solver;
  if (pcg) solver = std::make_unique<PcgStepSolver>(step.reduced.G, "cmg", CmgOptions{}, true, control);
  else solver = std::make_unique<DirectStepSolver>(step.reduced.G, true);
  CpuStepper stepper(step, *solver, x, probes_of(step, {nl.node_names.find(node)}));
  std::vector<double> out;
  integrate(stepper, h, step_count(spec.tstop, h), [&](int64_t, double, const std::vector<double>& v) { out.push_back(v[0]); });
  return out;
}

// Response of a first-order low-pass (time constant tau) to u(t) = u0 + du min(t / tr, 1), t >= 0.
double low_pass_of_ramp(double t, double u0, double du, double tr, double tau) {
  auto ramp = [&](double s) { return s <= 0 ? 0.0 : s - tau * (1 - std::exp(-s / tau)); };
  return u0 + du * (ramp(t) - ramp(t - tr)) / tr;
}

double input(double t, double u0, double du, double tr) { return u0 + du * std::min(t / tr, 1.0); }

}  // namespace

TEST_CASE("PULSE, PWL, .tran and .print are parsed into the netlist's side tables", "[transient][parser]") {
  const Netlist nl = parse(
      "V1 a 0 1.8\n"
      "R1 a b 1\n"
      "I1 b 0 2.5e-5 pulse(2.5e-05, 0.05, 2e-10,  1e-10,  1e-10,  1e-11,  3e-09)\n"
      "I2 b 0 PULSE ( 0 1m 1n )\n"
      "I3 b 0 DC 1m PWL(0 1m 1n 2m\n+ 2n 0)\n"
      "I4 b 0 1m AC 1\n"
      "C1 b 0 1p\n"
      ".tran 1e-11 1e-8\n"
      ".print tran v(b) V( a ) v(b)\n"
      ".print dc v(a)\n");
  const TransientInputs& t = nl.transient;
  REQUIRE(t.tran);
  CHECK(t.tran->tstep == 1e-11);
  CHECK(t.tran->tstop == 1e-8);
  CHECK(t.tran->line == 9);  // the continuation line counts
  REQUIRE(t.printed.size() == 3);
  CHECK(t.printed[0].name == "b");
  CHECK(t.printed[1].name == "a");
  REQUIRE(t.waveforms.size() == 3);
  CHECK(t.waveforms[0].element == 2);
  const Waveform* pulse = t.waveform_of(2);
  REQUIRE(pulse);
  CHECK(pulse->kind == Waveform::Kind::Pulse);
  CHECK(pulse->p == std::vector<double>{2.5e-5, 0.05, 2e-10, 1e-10, 1e-10, 1e-11, 3e-9});
  CHECK(nl.elements[3].value == 0.0);  // no DC value: the waveform's first value
  CHECK(std::isnan(t.waveform_of(3)->p[3]));  // left out: SPICE's default once the step is known
  CHECK(t.waveform_of(4)->kind == Waveform::Kind::Pwl);
  CHECK(nl.elements[4].value == 1e-3);
  CHECK(t.waveform_of(5) == nullptr);

  // The pulse: v1 before td, ramps, v2 for pw, falls, v1 again, periodic.
  const Waveform& w = *pulse;
  CHECK(w.at(0) == 2.5e-5);
  CHECK(w.at(2.5e-10) == Approx(2.5e-5 + 0.5 * (0.05 - 2.5e-5)));
  CHECK(w.at(3.05e-10) == 0.05);
  CHECK(w.at(3.6e-10) == Approx(2.5e-5 + 0.5 * (0.05 - 2.5e-5)));
  CHECK(w.at(1e-9) == 2.5e-5);
  CHECK(w.at(3e-9 + 2.5e-10) == Approx(w.at(2.5e-10)));
  const Waveform& p = *t.waveform_of(4);
  CHECK(p.at(0.5e-9) == Approx(1.5e-3));
  CHECK(p.at(1.5e-9) == Approx(1e-3));
  CHECK(p.at(5e-9) == 0.0);

  Waveform defaults = *t.waveform_of(3);
  defaults.resolve_defaults(1e-11, 1e-8);
  CHECK(defaults.p == std::vector<double>{0, 1e-3, 1e-9, 1e-11, 1e-11, 1e-8, 1e-8});
}

TEST_CASE("PULSE evaluation is SPICE's with fmod, bit for bit; held_until never skips a change", "[transient][parser]") {
  auto reference = [](const std::vector<double>& p, double t) {  // the PULSE definition with std::fmod
    const double v1 = p[0], v2 = p[1], td = p[2], tr = p[3], tf = p[4], pw = p[5], per = p[6];
    if (t < td) return v1;
    double tt = t - td;
    if (per > 0 && tt >= per) tt = std::fmod(tt, per);
    if (tt < tr) return v1 + (v2 - v1) * tt / tr;
    if (tt < tr + pw) return v2;
    if (tt < tr + pw + tf) return v2 + (v1 - v2) * (tt - tr - pw) / tf;
    return v1;
  };
  const Waveform ibm{Waveform::Kind::Pulse, {2.1569e-5, 0.0539225, 1.05e-9, 1e-10, 1e-10, 1e-11, 3e-9}};
  const Waveform odd{Waveform::Kind::Pulse, {1, -2, 1e-10 / 3, 7e-11, 1.3e-10, 0, 1e-9 / 7}};
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> anywhere(0, 2e-7);
  for (const Waveform* w : {&ibm, &odd}) {
    for (int n = 0; n <= 20000; ++n) REQUIRE(w->at(n * 1e-11) == reference(w->p, n * 1e-11));
    for (int k = 0; k < 20000; ++k) {
      const double t = anywhere(rng);
      REQUIRE(w->at(t) == reference(w->p, t));
    }
    // Every step time before held_until(t) gives at(t)'s value, on 10 ps and on a 1 ps grid.
    for (double h : {1e-11, 1e-12})
      for (int n = 0; n <= 3000; ++n) {
        const double t = n * h, until = w->held_until(t);
        REQUIRE(until >= t);
        for (int m = n + 1; m * h < until && m < n + 100000; ++m) REQUIRE(w->at(m * h) == w->at(t));
      }
  }
  CHECK(ibm.held_until(0) == 1.05e-9);         // resting before td
  CHECK(ibm.held_until(1.1e-9) == 1.1e-9);     // rising: no promise
  CHECK(ibm.held_until(2e-9) == Approx(4.05e-9 - 3e-15));  // resting until the next period's rise
  const Waveform pwl{Waveform::Kind::Pwl, {1e-9, 1, 2e-9, 3}};
  CHECK(pwl.held_until(0) == 1e-9);
  CHECK(pwl.held_until(1.5e-9) == 1.5e-9);
  CHECK(std::isinf(pwl.held_until(2e-9)));
}

TEST_CASE("SourceChanges gives every source's change_at(t), also when time goes back", "[transient]") {
  Netlist nl = parse_netlist_text(
      "V1 a 0 1.8\n"
      "R1 a b 1\n"
      "I1 b 0 2.5e-5 pulse(2.5e-05, 0.05, 2e-10, 1e-10, 1e-10, 1e-11, 3e-09)\n"
      "I2 b 0 pulse(0 1m 1n 20p 30p 50p 0.3n)\n"
      "I3 b 0 PWL(0 1m 1n 2m 2n 0)\n"
      "C1 b 0 1p\n"
      ".tran 1e-11 1e-8\n",
      "sources.sp");
  prepare_sources(nl, 1e-11, 1e-8);
  const StepSystem sys = build_step_system(nl, Integration::Trapezoidal, 1e-11);
  REQUIRE(sys.sources.size() == 3);
  SourceChanges changes(sys);
  std::vector<double> got(3);
  auto check = [&](double t) {
    changes.at(t, got.data());
    for (size_t k = 0; k < 3; ++k) REQUIRE(got[k] == sys.sources[k].change_at(t));
  };
  for (int n = 1; n <= 1000; ++n) check(n * 1e-11);
  for (int n = 1; n <= 1000; n += 7) check(n * 1e-11);  // again from the start
  for (int n = 1000; n >= 1; --n) check(n * 1e-11);
}

TEST_CASE("a chunked parser's transient tables merge with shifted element indices", "[transient][parser]") {
  Netlist first = parse("V1 a 0 1\nI1 a 0 PWL(0 0 1n 1m)\n.print tran v(a)\n");
  Netlist second = parse("R1 a 0 1\nI2 a 0 1m PULSE(1m 2m)\n.tran 1p 1n\n.print tran v(a)\n");
  first.transient.append(std::move(second.transient), static_cast<uint32_t>(first.elements.size()));
  const TransientInputs& t = first.transient;
  REQUIRE(t.waveforms.size() == 2);
  CHECK(t.waveforms[0].element == 1);
  CHECK(t.waveforms[1].element == 3);  // element 1 of the second chunk, after the first chunk's 2
  CHECK(t.waveform_of(3)->kind == Waveform::Kind::Pulse);
  REQUIRE(t.tran);
  CHECK(t.tran->tstep == 1e-12);
  CHECK(t.printed.size() == 2);
}

TEST_CASE("unsupported transient input is an error with file:line", "[transient][parser]") {
  auto message = [](const std::string& text) {
    try {
      parse(text);
    } catch (const ParseError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string ok = "V1 a 0 1\nR1 a 0 1\n";
  CHECK(message(ok + "I1 a 0 0 SIN(0 1 1meg)\n") == "t.sp:3: 'SIN' sources are not supported (PULSE and PWL are)");
  CHECK(message(ok + "I1 a 0 0 EXP(0 1)\n") == "t.sp:3: 'EXP' sources are not supported (PULSE and PWL are)");
  CHECK(message(ok + "I1 a 0 0 PULSE(0)\n") == "t.sp:3: PULSE takes 2 to 7 values (v1 v2 td tr tf pw per), not 1");
  CHECK(message(ok + "I1 a 0 0 PWL(0 1 2)\n") ==
        "t.sp:3: PWL takes pairs of time and value (t1 v1 t2 v2 ...), not 3 values");
  CHECK(message(ok + "I1 a 0 0 PWL(1n 1 0 2)\n") == "t.sp:3: PWL: the times must not decrease");
  CHECK(message(ok + "I1 a 0 0 PULSE(0 1 1n\n") == "t.sp:3: PULSE: missing ')'");
  CHECK(message(ok + "I1 a 0 0 PULSE(0 x)\n") == "t.sp:3: PULSE: 'x' is not a finite number");
  CHECK(message(ok + ".tran 1n\n") == "t.sp:3: .tran takes TSTEP TSTOP [TSTART [TMAX]]");
  CHECK(message(ok + ".tran 0 1n\n") == "t.sp:3: .tran: TSTEP must be positive");
  CHECK(message(ok + ".tran 1p 1n uic\n") ==
        "t.sp:3: .tran UIC is not supported: the transient starts from the DC operating point");
  CHECK(message(ok + ".print tran i(V1)\n") == "t.sp:3: .print: 'i'(...) is not supported (only v(node) is)");
  CHECK(message(ok + ".print tran v(a,0)\n") == "t.sp:3: .print: expected v(node), found 'v' not followed by (node) of one node");
  CHECK(message(ok + "R2 a 0 1 pulse(0 1)\n") == "t.sp:3: element 'R2': unexpected field 'pulse(0' after the value");
}

TEST_CASE("an RC circuit follows its analytic response; TR is second order, BE first", "[transient]") {
  // 1 kOhm || 1 pF (tau = 1 ns) driven by 2 mA stepping to 3 mA over 10 ps.
  const std::string text = "I1 0 n PWL(0 2m 10p 3m)\nR1 n 0 1k\nC1 n 0 1p\n.tran 1p 5n\n";
  const double tau = 1e-9, R = 1e3;
  auto worst_error = [&](Integration method, double h) {
    const std::vector<double> v = simulate(parse(text), "n", method, h);
    double worst = 0;
    for (size_t n = 0; n < v.size(); ++n)
      worst = std::max(worst, std::abs(v[n] - R * low_pass_of_ramp(double(n) * h, 2e-3, 1e-3, 10e-12, tau)));
    return worst;
  };
  const double tr1 = worst_error(Integration::Trapezoidal, 1e-12), tr2 = worst_error(Integration::Trapezoidal, 2e-12);
  const double be1 = worst_error(Integration::BackwardEuler, 1e-12), be2 = worst_error(Integration::BackwardEuler, 2e-12);
  CHECK(tr1 < 1e-5);    // of a 1 V swing
  CHECK(be1 < 1e-3);
  CHECK(tr2 / tr1 == Approx(4).epsilon(0.3));
  CHECK(be2 / be1 == Approx(2).epsilon(0.3));
  CHECK(simulate(parse(text), "n", Integration::Trapezoidal, 1e-12).front() == Approx(2.0).epsilon(1e-12));
}

TEST_CASE("an RL circuit: the inductor's DC current, then its analytic response", "[transient]") {
  // Pad a at 0 V, 1 nH from a to n, 1 Ohm from n to ground (tau = L/R = 1 ns); 2 mA into n stepping
  // to 3 mA. At DC the inductor carries all 2 mA (v(n) = 0); then v(n) = R (u - low-pass of u).
  const std::string text = "V1 a 0 0\nL1 n a 1n\nR1 n 0 1\nI1 0 n PWL(0 2m 10p 3m)\n.tran 1p 5n\n";
  const double tau = 1e-9, R = 1.0;
  for (Integration method : {Integration::Trapezoidal, Integration::BackwardEuler}) {
    const std::vector<double> v = simulate(parse(text), "n", method, 1e-12);
    double worst = 0;
    for (size_t n = 0; n < v.size(); ++n) {
      const double t = double(n) * 1e-12;
      worst = std::max(worst, std::abs(v[n] - R * (input(t, 2e-3, 1e-3, 10e-12) -
                                                   low_pass_of_ramp(t, 2e-3, 1e-3, 10e-12, tau))));
    }
    CHECK(v.front() == 0.0);
    // v(n) peaks near 1 mV: TR within 0.1%, BE (first order, h / 2 tau) within 5%.
    CHECK(worst < (method == Integration::Trapezoidal ? 1e-6 : 5e-5));
  }
}

TEST_CASE("a PWL voltage source drives an RC through a resistor: the analytic response", "[transient]") {
  // Pad a ramps from 1 V to 2 V over 10 ps; 1 kOhm from a to n, 1 pF from n to ground (tau = 1 ns):
  // v(n) is the low-pass of the ramp, v(a) the ramp itself.
  const std::string text = "V1 a 0 PWL(0 1 10p 2)\nR1 a n 1k\nC1 n 0 1p\n.tran 1p 5n\n";
  const double tau = 1e-9;
  auto worst_error = [&](Integration method, double h) {
    const std::vector<double> v = simulate(parse(text), "n", method, h);
    double worst = 0;
    for (size_t n = 0; n < v.size(); ++n)
      worst = std::max(worst, std::abs(v[n] - low_pass_of_ramp(double(n) * h, 1.0, 1.0, 10e-12, tau)));
    return worst;
  };
  const double tr1 = worst_error(Integration::Trapezoidal, 1e-12), tr2 = worst_error(Integration::Trapezoidal, 2e-12);
  const double be1 = worst_error(Integration::BackwardEuler, 1e-12), be2 = worst_error(Integration::BackwardEuler, 2e-12);
  // Of the 1 V swing: TR (second order) within 1e-5, BE (first order, about h / 2 tau of the
  // ramp's effect) within 1e-3 but measurably off; halving h divides them by 4 and by 2.
  CHECK(tr1 < 1e-5);
  CHECK(be1 < 1e-3);
  CHECK(be1 > 1e-5);
  CHECK(tr2 / tr1 == Approx(4).epsilon(0.3));
  CHECK(be2 / be1 == Approx(2).epsilon(0.3));
  const std::vector<double> a = simulate(parse(text), "a", Integration::Trapezoidal, 1e-12);
  for (size_t n = 0; n < a.size(); ++n) CHECK(a[n] == Approx(input(double(n) * 1e-12, 1.0, 1.0, 10e-12)).margin(1e-12));
}

TEST_CASE("a mesh with a PULSE pad matches the pad as a Norton source through the current-source path", "[transient]") {
  // Pad 0 dips from 1.8 V to 1.7 V; a 0-ohm short puts padx into its super-node, and a capacitor
  // joins padx to the mesh, so nodes', an inductor's and a capacitor's offsets all move. The
  // reference replaces the source by 1.8e6 A (PULSE) into pad0 beside 1 uOhm: the pad becomes an
  // unknown and the waveform a current source's. Its error: the pad's current (< 0.1 A) times
  // 1 uOhm, under 1e-7 V.
  const std::string mesh = test::transient_mesh(12), pad = "Vpad0 pad0 0 1.8\n";
  const size_t at = mesh.find(pad);
  REQUIRE(at != std::string::npos);
  const std::string extra = "Rshort pad0 padx 0\nCx padx n_3_3 2p\n";
  std::string moving = mesh, norton = mesh;
  moving.replace(at, pad.size(), "Vpad0 pad0 0 PULSE(1.8 1.7 100p 50p 50p 300p 1n)\n" + extra);
  norton.replace(at, pad.size(), "Ipad0 0 pad0 PULSE(1.8e6 1.7e6 100p 50p 50p 300p 1n)\nRpad0 pad0 0 1e-6\n" + extra);
  for (Integration method : {Integration::Trapezoidal, Integration::BackwardEuler})
    for (const std::string probe : {"n_6_6", "n_0_0", "pad0", "padx", "n_3_3"}) {
      INFO(probe);
      const auto got = simulate(parse(moving), probe, method, 10e-12);
      const auto got_pcg = simulate(parse(moving), probe, method, 10e-12, true);
      const auto want = simulate(parse(norton), probe, method, 10e-12);
      REQUIRE(got.size() == 201);
      CHECK(test::max_abs_difference(got, want) < 1e-7);
      CHECK(test::max_abs_difference(got, got_pcg) < 1e-8);
      CHECK(*std::min_element(got.begin(), got.end()) < got.front() - 5e-3);  // the dip reaches it
    }
  // The worst drop's tracking: the pad's own range is the PULSE's, the short's other end follows it.
  Netlist nl = parse(moving);
  std::vector<double> x;
  StepSystem step = test::started_step_system(nl, Integration::Trapezoidal, 10e-12, x);
  DirectStepSolver solver(step.reduced.G, true);
  CpuStepper stepper(step, solver, x, {});
  integrate(stepper, 10e-12, 200, [](int64_t, double, const std::vector<double>&) {});
  std::vector<double> lo, hi;
  stepper.moving_range(lo, hi);
  REQUIRE(step.moving.size() == 2);
  for (size_t m = 0; m < 2; ++m) {
    CHECK(lo[m] == Approx(1.7).margin(1e-12));
    CHECK(hi[m] == Approx(1.8).margin(1e-12));
  }
}

TEST_CASE("warm-started CMG-PCG and the factorisation give the same waveforms on a grid", "[transient]") {
  const std::string text = test::transient_mesh(40);
  const std::string probe = "n_20_20";
  const auto direct = simulate(parse(text), probe, Integration::Trapezoidal, 10e-12);
  const auto pcg = simulate(parse(text), probe, Integration::Trapezoidal, 10e-12, true);
  REQUIRE(direct.size() == 201);
  CHECK(direct.front() < 1.8);
  CHECK(*std::min_element(direct.begin(), direct.end()) < direct.front() - 1e-3);  // the pulses move it
  CHECK(test::max_abs_difference(direct, pcg) < 1e-9);
}

TEST_CASE("the factorisation of the kept system (chains eliminated) solves the whole step system", "[transient]") {
  Netlist nl = parse(test::transient_mesh(20));
  std::vector<double> x0;
  const StepSystem step = test::started_step_system(nl, Integration::Trapezoidal, 10e-12, x0);
  DirectStepSolver kept(step.reduced.G, true), whole(step.reduced.G, false);
  const std::vector<double> b = test::random_vector(step.reduced.b.size(), 3);
  // Two solves each: the second reuses CHOLMOD's workspace.
  for (int k = 0; k < 2; ++k) {
    std::vector<double> x_kept = x0, x_whole(x0.size(), 0.0);
    REQUIRE(kept.solve(b, x_kept).converged);
    REQUIRE(whole.solve(b, x_whole).converged);
    CHECK(relative_residual(step.reduced.G, b, x_whole) < 1e-12);
    CHECK(relative_residual(step.reduced.G, b, x_kept) < 1e-12);
    double largest = 0;
    for (double v : x_whole) largest = std::max(largest, std::abs(v));
    CHECK(test::max_abs_difference(x_kept, x_whole) <= 1e-12 * largest);
  }
}

TEST_CASE("an inductor in a loop of shorts has no DC current: an error naming it", "[transient]") {
  Netlist nl = parse("V1 a 0 1\nL1 a b 1n\nL2 a b 1n\nR1 b 0 1\nC1 b 0 1p\n.tran 1p 1n\n");
  CHECK_THROWS_WITH(simulate(std::move(nl), "b", Integration::Trapezoidal, 1e-12),
                    Catch::Contains("t.sp:2: inductor 'L1' lies in a loop"));
}

TEST_CASE("chain elimination condenses and recovers another right-hand side exactly", "[transient]") {
  // A path a - b - c - d to a pad: b and c are a chain.
  const Netlist nl = parse("V1 p 0 1\nR0 p a 1\nR1 a b 2\nR2 b c 3\nR3 c d 4\nR4 d 0 5\nR5 a d 6\nR6 a 0 7\nI1 b 0 1m\n");
  const ReducedSystem sys = reduce(nl);
  const EliminatedSystem chains = eliminate_chains(sys.G, std::vector<double>(sys.b.size(), 0.0));
  REQUIRE(chains.eliminated() > 0);
  const std::vector<double> b = test::random_vector(sys.b.size(), 7);
  std::vector<double> rhs(b.size()), b_kept(chains.kept.size()), x_kept, x(b.size()), x_direct;
  chains.condense(b.data(), rhs.data(), b_kept.data());
  solve_direct(chains.G, b_kept, x_kept);
  chains.recover(x_kept.data(), rhs.data(), x.data());
  solve_direct(sys.G, b, x_direct);
  CHECK(test::max_abs_difference(x, x_direct) < 1e-12);
}

TEST_CASE("ibmpg1t against IBM's waveforms: TR within 0.1 mV, BE within 1.5 mV, t = 0 within 0.001 mV", "[transient][ibm]") {
  const std::string netlist = test::shared_data("ibmpg1t.spice"), reference = test::shared_data("ibmpg1t.output");
  if (!std::ifstream(netlist) || !std::ifstream(reference)) {
    WARN("no ibmpg1t data in " PGSIM_SHARED_DATA);
    return;
  }
  test::TempDir dir;
  const std::vector<NodeWaveform> ref = read_waveforms(reference);
  // The default options (app/backend.hpp): PCG on the GPU where one is usable (tests/test_gpu_transient.cpp
  // holds it to the factorisation), else the factorisation (the test above holds PCG to it); and the
  // factorisation with backward Euler.
  for (const char* args : {"", " --method be --solver direct"}) {
    const bool tr = std::string(args).find("be") == std::string::npos;
    INFO("options: " << args);
    REQUIRE(test::run_pgsim(netlist + args + " -q -o " + dir.file("w.txt") + " --compare " + reference + " --json " +
                                dir.file("r.json"),
                            dir.file("log")) == kExitOk);
    const auto j = nlohmann::json::parse(test::read_text(dir.file("r.json")));
    const auto& t = j.at("transient");
    const std::string backend = j.at("solver").at("backend");
    CHECK(j.at("solver").at("method") == (backend == "gpu" ? "pcg" : "direct"));
    CHECK(t.at("steps") == 1000);
    CHECK(t.at("compare").at("nodes") == 20);
    CHECK(t.at("compare").at("points") == 20 * 1001);
    CHECK(t.at("compare").at("missing") == 0);
    CHECK(t.at("compare").at("max_abs_error").get<double>() <= (tr ? 0.1e-3 : 1.5e-3));
    if (tr) CHECK(t.at("compare").at("mean_abs_error").get<double>() <= 0.01e-3);
    // -o: IBM's layout, and the DC operating point at t = 0 (IBM prints 7 digits).
    const std::vector<NodeWaveform> ours = read_waveforms(dir.file("w.txt"));
    REQUIRE(ours.size() == ref.size());
    for (size_t k = 0; k < ours.size(); ++k) {
      CHECK(ours[k].name == ref[k].name);
      REQUIRE(ours[k].time.size() == 1001);
      CHECK(ours[k].time.front() == 0.0);
      CHECK(std::abs(ours[k].value.front() - ref[k].value.front()) <= 0.001e-3);
    }
    CHECK(j.at("ir_drop").at("drop").at("worst").get<double>() > 0);
  }
}
