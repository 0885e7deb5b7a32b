// --backend: auto picks the CPU for small systems and without a GPU, saying why; gpu without a GPU is a
// clear error.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <optional>
#include <stdexcept>

#include "app/backend.hpp"
#include "parser/input_error.hpp"
#include "test_util.hpp"
#ifdef PGSIM_HAVE_CUDA
#include "gpu/device_info.hpp"
#endif

using namespace pgsim;

namespace {

bool gpu_built() {
#ifdef PGSIM_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

bool gpu_usable() {
#ifdef PGSIM_HAVE_CUDA
  return gpu::device_available(nullptr);
#else
  return false;
#endif
}

const char* kGrid =
    "* 2x2 grid, pad at n1\n"
    "R1 n1 n2 1\nR2 n2 n3 1\nR3 n3 n4 1\nR4 n4 n1 1\n"
    "V1 n1 0 1.0\nI1 n3 0 1m\n.end\n";

}  // namespace

TEST_CASE("backend auto solves a small system on the CPU and says why") {
  test::TempDir dir;
  const std::string net = dir.write("g.sp", kGrid);
  REQUIRE(test::run_pgsim("\"" + net + "\" --backend auto --json " + dir.file("r.json"), dir.file("log")) == 0);
  const std::string json = test::read_text(dir.file("r.json"));
  CHECK(json.find("\"backend\": \"cpu\"") != std::string::npos);
  // A few bytes of netlist: no context ahead, so the higher threshold applies.
  const std::string why = "unknowns after chain elimination, below the " + std::to_string(kAutoGpuMinUnknownsCold) +
                          " from which the GPU finishes first with no GPU context created ahead";
  CHECK(json.find(why) != std::string::npos);
  CHECK(test::read_text(dir.file("log")).find(why + ": solving on the cpu") != std::string::npos);
}

TEST_CASE("the auto rule: the CPU below the crossover, the GPU from it where one is usable") {
  for (const bool ahead : {true, false}) {
    const int64_t threshold = ahead ? kAutoGpuMinUnknowns : kAutoGpuMinUnknownsCold;
    INFO("context ahead: " << ahead);
    const BackendChoice small = choose_backend("auto", threshold - 1, ahead);
    CHECK(small.backend == "cpu");
    CHECK(small.reason.find(std::to_string(threshold - 1) + " unknowns") != std::string::npos);
    const BackendChoice large = choose_backend("auto", threshold, ahead);
    if (gpu_usable()) {
      CHECK(large.backend == "gpu");
      CHECK(large.reason.find("at least " + std::to_string(threshold)) != std::string::npos);
    } else {
      CHECK(large.backend == "cpu");
      CHECK(large.reason.find("no usable GPU") != std::string::npos);
    }
  }
  CHECK(kAutoGpuMinUnknownsCold > kAutoGpuMinUnknowns);
  // An explicit request is never second-guessed by the size.
  CHECK(choose_backend("cpu", int64_t(1) << 40, true).backend == "cpu");
  if (gpu_usable()) CHECK(choose_backend("gpu", 3, false).backend == "gpu");
  CHECK_THROWS_AS(choose_backend("tpu", 3, true), InputError);
}

TEST_CASE("the transient rule: the CPU for direct and for little work, the GPU from both thresholds") {
  Options opt;
  opt.backend = "auto";
  opt.solver_given = true;  // --solver pcg: the rule below that picks the factorisation is off
  // Asked only by that rule.
  const auto no_factor = []() -> std::optional<int64_t> { throw std::logic_error("factor entries asked"); };
  const int64_t steps = 1000, enough = std::max(kAutoGpuMinTransientUnknowns, int64_t(kAutoGpuMinTransientWork) / steps);
  const BackendChoice small = choose_transient_backend(opt, false, enough - 1, steps, no_factor);
  CHECK(small.backend == "cpu");
  CHECK(small.reason.find(std::to_string(enough - 1) + " unknowns x 1000 steps") != std::string::npos);
  // Many steps do not make a small system worth the GPU: its step has a latency floor.
  CHECK(choose_transient_backend(opt, false, kAutoGpuMinTransientUnknowns - 1, 1000000, no_factor).backend == "cpu");
  const BackendChoice large = choose_transient_backend(opt, false, enough, steps, no_factor);
  CHECK(large.backend == (gpu_usable() ? "gpu" : "cpu"));
  if (!gpu_usable()) CHECK(large.reason.find("no usable GPU") != std::string::npos);
  opt.solver = "direct";
  CHECK(choose_transient_backend(opt, false, enough * 100, steps, no_factor).backend == "cpu");
  opt.solver = "pcg";
  opt.backend = "cpu";
  CHECK(choose_transient_backend(opt, false, enough * 100, steps, no_factor).backend == "cpu");
  opt.backend = "gpu";
  if (gpu_usable()) CHECK(choose_transient_backend(opt, false, 3, 1, no_factor).backend == "gpu");
  else CHECK_THROWS_WITH(choose_transient_backend(opt, false, 3, 1, no_factor), Catch::Contains("no usable GPU"));
}

TEST_CASE("the transient rule: voltage sources with a waveform keep the time loop on the CPU") {
  Options opt;
  opt.backend = "auto";
  opt.solver_given = true;
  const auto no_factor = []() -> std::optional<int64_t> { throw std::logic_error("factor entries asked"); };
  const int64_t big = 100 * kAutoGpuMinTransientUnknowns;
  const BackendChoice large = choose_transient_backend(opt, true, big, 100000, no_factor);
  CHECK(large.backend == "cpu");
  CHECK(large.solver == "pcg");
  CHECK(large.reason.find("voltage sources with a waveform") != std::string::npos);
  opt.backend = "gpu";  // a warning, and the CPU
  const BackendChoice asked = choose_transient_backend(opt, true, big, 100000, no_factor);
  CHECK(asked.backend == "cpu");
  CHECK(asked.reason.find("--backend gpu: voltage sources with a waveform") != std::string::npos);
}

TEST_CASE("the transient rule: auto with the default solver factors a small, sparse step system on the CPU") {
  Options opt;
  opt.backend = "auto";
  const int64_t steps = 1000, most = kAutoDirectMaxTransientUnknowns;
  int asked = 0;
  auto entries = [&](int64_t n) {
    return [&asked, n]() -> std::optional<int64_t> {
      ++asked;
      return n;
    };
  };
  // Within the smaller bound the factorisation beats the GPU too.
  const BackendChoice small = choose_transient_backend(opt, false, most, steps, entries(kAutoDirectMaxFactorEntriesBesideGpu));
  CHECK(small.backend == "cpu");
  CHECK(small.solver == "direct");
  CHECK(small.reason.find(std::to_string(most) + " unknowns and " +
                          std::to_string(kAutoDirectMaxFactorEntriesBesideGpu) + " factor entries") != std::string::npos);
  CHECK(asked == 1);
  // Beyond it the GPU, where one is usable; else the factorisation up to the larger bound.
  const BackendChoice middle = choose_transient_backend(opt, false, most, steps, entries(kAutoDirectMaxFactorEntries));
  CHECK(middle.backend == (gpu_usable() ? "gpu" : "cpu"));
  CHECK(middle.solver == (gpu_usable() ? "pcg" : "direct"));
  if (!gpu_usable()) CHECK(middle.reason.find("no usable GPU") != std::string::npos);
  // Too little work for the GPU: the factorisation up to the larger bound too.
  const BackendChoice brief = choose_transient_backend(opt, false, most, 1, entries(kAutoDirectMaxFactorEntries));
  CHECK(brief.backend == "cpu");
  CHECK(brief.solver == "direct");
  CHECK(brief.reason.find(std::to_string(most) + " unknowns x 1 steps") != std::string::npos);
  // A factor too dense (a step too slow), no CHOLMOD, or too many unknowns to analyse: PCG.
  using Entries = std::function<std::optional<int64_t>()>;
  for (const Entries& dense : {Entries(entries(kAutoDirectMaxFactorEntries + 1)), Entries([] { return std::nullopt; })}) {
    const BackendChoice c = choose_transient_backend(opt, false, most, steps, dense);
    CHECK(c.solver == "pcg");
    CHECK(c.backend == (gpu_usable() ? "gpu" : "cpu"));
  }
  asked = 0;
  CHECK(choose_transient_backend(opt, false, most + 1, steps, entries(1)).solver == "pcg");
  opt.solver_given = true;  // --solver pcg or a --precond: PCG, as asked
  CHECK(choose_transient_backend(opt, false, most, steps, entries(1)).solver == "pcg");
  opt.solver_given = false;
  for (const char* backend : {"cpu", "gpu"}) {  // an explicit back end keeps the solver asked for
    opt.backend = backend;
    if (opt.backend == "gpu" && !gpu_usable()) continue;
    CHECK(choose_transient_backend(opt, false, most, steps, entries(1)).solver == "pcg");
  }
  CHECK(asked == 0);
}

TEST_CASE("the GPU warm-up starts only where the run may use the GPU") {
  test::TempDir dir;
  Options opt;
  opt.netlist = dir.write("g.sp", kGrid);
  opt.backend = "auto";
  CHECK_FALSE(gpu_likely(opt));  // a few bytes: far below kAutoWarmUpMinBytes
  // A transient file from kAutoWarmUpMinTransientBytes: a .tran line near its end (any case, indented).
  const std::string filler = "* " + std::string(kAutoWarmUpMinTransientBytes, 'x') + "\n" + kGrid;
  opt.netlist = dir.write("t.sp", filler + "  .TRAN 1e-11 1e-8\n.end\n");
  CHECK(gpu_likely(opt) == gpu_built());
  opt.dc_only = true;  // --dc: the DC operating point, as any DC run of this size
  CHECK_FALSE(gpu_likely(opt));
  opt.dc_only = false;
  opt.netlist = dir.write("t2.sp", filler + "* .tran in a comment\n.trans 1\n.end\n");
  CHECK_FALSE(gpu_likely(opt));
  opt.netlist = dir.write("t3.sp", std::string(kGrid) + ".tran 1e-11 1e-8\n");  // too small to reach the GPU
  CHECK_FALSE(gpu_likely(opt));
  opt.netlist = dir.file("missing.sp");
  CHECK(gpu_likely(opt) == gpu_built());  // size unknown ahead: the parser will say what is wrong
  opt.netlist = dir.write("g.sp.gz", std::string("\x1f\x8b", 2) + "compressed: the text's size is unknown");
  CHECK(gpu_likely(opt) == gpu_built());
  opt.netlist = "-";
  CHECK(gpu_likely(opt) == gpu_built());
  opt.backend = "gpu";
  CHECK(gpu_likely(opt) == gpu_built());
  opt.export_only = true;
  CHECK_FALSE(gpu_likely(opt));
  opt.export_only = false;
  opt.backend = "cpu";
  CHECK_FALSE(gpu_likely(opt));
}

TEST_CASE("backend gpu without a GPU is an error naming the cause") {
  if (gpu_usable()) return;  // nothing to test where a GPU exists: the GPU tests cover it
  test::TempDir dir;
  const std::string net = dir.write("g.sp", kGrid);
  CHECK(test::run_pgsim("\"" + net + "\" --backend gpu", dir.file("log")) == 4);
  CHECK(test::read_text(dir.file("log")).find("no usable GPU") != std::string::npos);
}

TEST_CASE("backend cpu and unknown back ends") {
  test::TempDir dir;
  const std::string net = dir.write("g.sp", kGrid);
  CHECK(test::run_pgsim("\"" + net + "\" --backend cpu", dir.file("log")) == 0);
  CHECK(test::run_pgsim("\"" + net + "\" --backend tpu", dir.file("log2")) == 2);
}
