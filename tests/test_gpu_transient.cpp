// The GPU transient stepper (gpu/gpu_stepper.hpp) against the CPU's: the same probed waveforms and
// unknown ranges as the factorisation on a grid with decaps, pads behind inductors and PULSE loads,
// and pgsim --backend gpu on ibmpg1t within IBM's tolerances and the CPU's waveforms.
#include <catch2/catch.hpp>

#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "app/exit_codes.hpp"
#include "app/waveform_file.hpp"
#include "cmg/builder.hpp"
#include "gpu/gpu_stepper.hpp"
#include "gpu_test_util.hpp"
#include "parser/netlist.hpp"
#include "pcg/direct.hpp"
#include "test_util.hpp"
#include "tran/integrate.hpp"
#include "transient_test_util.hpp"

using namespace pgsim;

namespace {

struct Run {
  std::vector<std::vector<double>> probed;  // per step
  std::vector<double> lo, hi;
  IntegrationStats stats;
};

Run run(Stepper& stepper, double h, int64_t steps) {
  Run r;
  r.stats = integrate(stepper, h, steps, [&](int64_t, double, const std::vector<double>& v) { r.probed.push_back(v); });
  stepper.unknown_range(r.lo, r.hi);
  return r;
}

double max_difference(const std::vector<std::vector<double>>& a, const std::vector<std::vector<double>>& b) {
  REQUIRE(a.size() == b.size());
  double d = 0;
  for (size_t n = 0; n < a.size(); ++n) d = std::max(d, test::max_abs_difference(a[n], b[n]));
  return d;
}

}  // namespace

TEST_CASE("the GPU stepper gives the factorisation's waveforms and ranges on a transient grid", "[gpu][transient]") {
  test::skip_without_gpu();
  for (const Integration method : {Integration::Trapezoidal, Integration::BackwardEuler})
    for (const char* precond : {"cmg", "jacobi"}) {
      INFO((method == Integration::Trapezoidal ? "TR, " : "BE, ") << precond);
      Netlist nl = parse_netlist_text(test::transient_mesh(40), "t.sp");
      const double h = 10e-12;
      std::vector<double> x0;
      StepSystem step = test::started_step_system(nl, method, h, x0);
      REQUIRE(step.branches.size() > 200);
      REQUIRE(step.sources.size() > 200);
      std::vector<uint32_t> nodes;
      for (const char* name : {"n_20_20", "n_0_0", "n_39_39", "n_7_0", "pad0"}) nodes.push_back(nl.node_names.find(name));
      const std::vector<Probe> probes = probes_of(step, nodes);
      CHECK(probes.back().unknown == -1);  // a source fixes pad0: its probe reads the offset alone

      // The GPU stepper first: it copies the step system's state, which the CPU stepper then advances.
      SolveControl control;
      control.tolerance = 1e-12;
      const CmgHierarchy hierarchy = build_cmg_hierarchy(step.reduced.G);
      gpu::GpuSolveSettings settings;
      settings.precond = precond;
      auto gpu_stepper = gpu::make_gpu_stepper(step, x0, probes, &hierarchy, control, settings);
      DirectStepSolver direct(step.reduced.G, true);
      CpuStepper cpu_stepper(step, direct, x0, probes);

      const int64_t steps = 60;  // through every pulse's rise, top and fall (short under compute-sanitizer)
      const Run cpu = run(cpu_stepper, h, steps), gpu = run(*gpu_stepper, h, steps);
      REQUIRE(gpu.stats.converged);
      CHECK(gpu.stats.steps == steps);
      CHECK(gpu.stats.iterations >= gpu.stats.steps);  // every step iterates: the loads move every step
      CHECK(gpu.probed.size() == size_t(steps) + 1);
      CHECK(gpu.probed.front() == cpu.probed.front());  // t = 0: the same x0
      CHECK(max_difference(gpu.probed, cpu.probed) < 1e-9);
      CHECK(test::max_abs_difference(gpu.lo, cpu.lo) < 1e-9);
      CHECK(test::max_abs_difference(gpu.hi, cpu.hi) < 1e-9);
      // Times off integrate's grid, in the loads' second rise (1 ns on): the GPU stepper evaluated
      // the sources of (n + 1) h ahead, so it must evaluate these when asked, and 103 h is again
      // the one it evaluated ahead. Still the CPU's.
      for (const double t : {100.5 * h, 101.7 * h, 103.0 * h}) {
        REQUIRE(gpu_stepper->advance(t).converged);
        REQUIRE(cpu_stepper.advance(t).converged);
        CHECK(test::max_abs_difference(gpu_stepper->probed(), cpu_stepper.probed()) < 1e-9);
      }
      // The loads pull the centre down by millivolts: the comparison above is not of constants.
      double low = 1.8;
      for (const auto& v : cpu.probed) low = std::min(low, v[0]);
      CHECK(low < cpu.probed.front()[0] - 1e-3);
    }
}

TEST_CASE("the GPU stepper refuses a step system whose voltage sources follow waveforms", "[gpu][transient]") {
  // Checked before any device work, so it runs without a GPU too.
  Netlist nl = parse_netlist_text("V1 a 0 PWL(0 1.8 1n 1.7)\nR1 a b 1\nC1 b 0 1p\nI1 b 0 1m\n.tran 10p 1n\n", "t.sp");
  std::vector<double> x0;
  StepSystem step = test::started_step_system(nl, Integration::Trapezoidal, 10e-12, x0);
  REQUIRE(step.voltages.size() == 1);
  const CmgHierarchy hierarchy = build_cmg_hierarchy(step.reduced.G);
  CHECK_THROWS_AS(gpu::make_gpu_stepper(step, x0, {}, &hierarchy, SolveControl{}, gpu::GpuSolveSettings{}),
                  std::logic_error);
}

TEST_CASE("pgsim --backend gpu: ibmpg1t within IBM's tolerances and the CPU's waveforms", "[gpu][transient][ibm]") {
  test::skip_without_gpu();
  const std::string netlist = test::shared_data("ibmpg1t.spice"), reference = test::shared_data("ibmpg1t.output");
  if (!std::ifstream(netlist) || !std::ifstream(reference)) {
    WARN("no ibmpg1t data in " PGSIM_SHARED_DATA);
    return;
  }
  test::TempDir dir;
  REQUIRE(test::run_pgsim(netlist + " -q --backend gpu -o " + dir.file("gpu.txt") + " --compare " + reference +
                              " --json " + dir.file("gpu.json"),
                          dir.file("gpu.log")) == kExitOk);
  REQUIRE(test::run_pgsim(netlist + " -q --backend cpu --solver direct -o " + dir.file("cpu.txt") + " --json " +
                              dir.file("cpu.json"),
                          dir.file("cpu.log")) == kExitOk);
  const auto j = nlohmann::json::parse(test::read_text(dir.file("gpu.json")));
  CHECK(j.at("solver").at("backend") == "gpu");
  const auto& t = j.at("transient");
  CHECK(t.at("steps") == 1000);
  CHECK(t.at("mean_iterations").get<double>() > 0);
  CHECK(t.at("compare").at("points") == 20 * 1001);
  CHECK(t.at("compare").at("max_abs_error").get<double>() <= 0.1e-3);
  CHECK(t.at("compare").at("mean_abs_error").get<double>() <= 0.01e-3);
  const std::vector<NodeWaveform> gpu = read_waveforms(dir.file("gpu.txt")), cpu = read_waveforms(dir.file("cpu.txt"));
  REQUIRE(gpu.size() == cpu.size());
  for (size_t k = 0; k < gpu.size(); ++k) {
    CHECK(gpu[k].time == cpu[k].time);
    // The file prints 7 digits: one unit of the last is 1e-6 V at 1.8 V, and PCG to 1e-10 is far below it.
    CHECK(test::max_abs_difference(gpu[k].value, cpu[k].value) <= 1.01e-6);
  }
  const auto jc = nlohmann::json::parse(test::read_text(dir.file("cpu.json")));
  CHECK(j.at("ir_drop").at("drop").at("worst").get<double>() ==
        Approx(jc.at("ir_drop").at("drop").at("worst").get<double>()).margin(1e-7));
  CHECK(j.at("ir_drop").at("drop").at("worst_node") == jc.at("ir_drop").at("drop").at("worst_node"));
}

TEST_CASE("the GPU stepper given CmgOptions, its hierarchy built on the device (csr) or the host (seg): the same "
          "waveforms as with the host's hierarchy given", "[gpu][transient]") {
  test::skip_without_gpu();
  Netlist nl = parse_netlist_text(test::transient_mesh(40), "t.sp");
  const double h = 10e-12;
  std::vector<double> x0;
  const StepSystem step = test::started_step_system(nl, Integration::Trapezoidal, h, x0);
  std::vector<uint32_t> nodes;
  for (const char* name : {"n_20_20", "n_0_0", "n_39_39"}) nodes.push_back(nl.node_names.find(name));
  const std::vector<Probe> probes = probes_of(step, nodes);
  SolveControl control;
  control.tolerance = 1e-12;
  gpu::GpuSolveSettings settings;
  settings.precond = "cmg";
  CmgOptions cmg;
  cmg.coarse_rows = 200;  // a hierarchy of several levels on this small mesh
  cmg.v_cycle_rows = std::numeric_limits<int32_t>::max();  // the transient's V-cycle (app/backend.cpp)
  const CmgHierarchy hierarchy = build_cmg_hierarchy(step.reduced.G, cmg);
  REQUIRE(hierarchy.levels.size() >= 2);
  for (const std::string spmv : {"csr", "seg"}) {
    INFO("--spmv " << spmv);
    settings.spmv = spmv;
    REQUIRE(gpu::builds_hierarchy_on_device(settings, cmg, step.reduced.G.rows) == (spmv == "csr"));
    gpu::GpuStepperReport report;
    auto given = gpu::make_gpu_stepper(step, x0, probes, &hierarchy, control, settings);
    auto built = gpu::make_gpu_stepper(step, x0, probes, cmg, control, settings, &report);
    CHECK(report.setup_seconds > 0);
    const int64_t steps = 30;
    const Run a = run(*given, h, steps), b = run(*built, h, steps);
    REQUIRE(a.stats.converged);
    CHECK(b.stats.converged);
    CHECK(b.stats.iterations == a.stats.iterations);
    CHECK(b.probed == a.probed);  // the same hierarchy, the same arithmetic: the same bits
    CHECK(b.lo == a.lo);
    CHECK(b.hi == a.hi);
  }
}
