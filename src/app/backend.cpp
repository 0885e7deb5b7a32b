#include "app/backend.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>

#include "app/exit_codes.hpp"
#include "app/system_error.hpp"
#include "app/thread_budget.hpp"
#include "parser/input_error.hpp"
#include "parser/netlist_input.hpp"
#ifdef PGSIM_HAVE_CUDA

#include "cmg/builder.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/device_info.hpp"
#include "gpu/gpu_parse.hpp"
#include "gpu/gpu_solver.hpp"
#include "gpu/gpu_stepper.hpp"
#include "gpu/warm_up.hpp"
#include "mna/touched_vector.hpp"
#endif

namespace pgsim {
namespace {

// Whether a line of the file's last kTranTailBytes starts with .tran (any case, after blanks): a
// transient netlist, as IBM's and pgsim-gen's files end with their control lines. A guess that
// only decides whether the GPU context is started ahead: the parser has the last word.
constexpr size_t kTranTailBytes = 64 * 1024;
[[maybe_unused]] bool tail_has_tran_line(const std::string& path, uint64_t bytes) {
  std::ifstream in(path, std::ios::binary);
  const uint64_t tail = std::min<uint64_t>(bytes, kTranTailBytes);
  in.seekg(std::streamoff(bytes - tail));
  std::string text(size_t(tail), '\0');
  in.read(text.data(), std::streamsize(tail));
  text.resize(size_t(in.gcount()));
  for (auto& c : text) c = char(std::tolower(static_cast<unsigned char>(c)));
  for (size_t line = 0; line < text.size();) {
    size_t i = line;
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    if (text.compare(i, 5, ".tran") == 0 && i + 5 < text.size() && std::isspace(static_cast<unsigned char>(text[i + 5])))
      return true;
    const size_t end = text.find('\n', i);
    if (end == std::string::npos) break;
    line = end + 1;
  }
  return false;
}

}  // namespace

bool gpu_likely(const Options& opt) {
#ifdef PGSIM_HAVE_CUDA
  if (opt.solver != "pcg" || opt.export_only || opt.backend == "cpu") return false;
  if (opt.backend == "gpu") return true;
  // Standard input, a pipe or gzip data count as large (the parser reports a path that cannot be read).
  const std::optional<uint64_t> bytes = netlist_text_bytes(opt.netlist);
  if (!bytes || *bytes >= kAutoWarmUpMinBytes) return true;
  return !opt.dc_only && *bytes >= kAutoWarmUpMinTransientBytes && tail_has_tran_line(opt.netlist, *bytes);
#else
  (void)opt;
  return false;
#endif
}

bool gpu_parse_wanted(const std::string& parse, bool context_ahead, std::optional<uint64_t> bytes) {
  return parse == "gpu" || (parse == "auto" && context_ahead && bytes && *bytes >= kAutoGpuParseMinBytes);
}

Netlist read_netlist(const Options& opt, const ParseOptions& parse_options,
                     [[maybe_unused]] std::optional<uint64_t> text_bytes, [[maybe_unused]] bool context_ahead,
                     bool& on_gpu) {
  on_gpu = false;
  if (opt.parse != "auto" && opt.parse != "cpu" && opt.parse != "gpu")
    throw InputError("unknown --parse '" + opt.parse + "' (gpu, cpu or auto)");
#ifdef PGSIM_HAVE_CUDA
  const bool wanted = gpu_parse_wanted(opt.parse, context_ahead, text_bytes);
  // auto asks the GPU only where there is one (its absence is the solve's to report, not the parse's).
  if (wanted && opt.compare.empty() && (opt.parse == "gpu" || gpu::device_available(nullptr))) {
    Netlist netlist;
    std::string why;
    gpu::GpuParseTimes t;
    try {
      if (gpu::parse_netlist_on_gpu(opt.netlist, netlist_display_name(opt.netlist), parse_options, netlist, why, &t)) {
        spdlog::debug("parsed on the GPU: {}", t.text());
        on_gpu = true;
        return netlist;
      }
      spdlog::info("the GPU netlist reader declined {}: {}; reading it on the CPU", opt.netlist, why);
    } catch (const gpu::GpuError& e) {
      spdlog::warn("the GPU netlist reader failed ({}); reading {} on the CPU", e.what(), opt.netlist);
    }
  }
#else
  if (opt.parse == "gpu") throw InputError("--parse gpu: this pgsim was built without CUDA");
#endif
  return parse_netlist(opt.netlist, parse_options);
}

GpuContextWarmUp::GpuContextWarmUp([[maybe_unused]] bool start, int device, [[maybe_unused]] bool rank)
    : device_(device) {
#ifdef PGSIM_HAVE_CUDA
  if (start)
    thread_ = std::thread([this, device, rank] {
      const gpu::WarmUpTimes t = gpu::warm_up_device(device, rank);
      done_.store(true, std::memory_order_relaxed);
      spdlog::debug("GPU warm-up (beside the parse): context {:.3f} s, kernels {:.4f} s, first graph {:.4f} s, "
                    "first pinned allocation {:.4f} s",
                    t.context, t.kernels, t.graph, t.pinned);
    });
#endif
}

GpuContextWarmUp::~GpuContextWarmUp() {
  if (thread_.joinable()) thread_.join();
}

BackendChoice choose_backend(const std::string& requested, int64_t unknowns, bool context_ahead) {
  if (requested == "cpu") return {"cpu", "--backend cpu", "pcg"};
  if (requested != "gpu" && requested != "auto") throw InputError("unknown backend '" + requested + "' (gpu, cpu or auto)");
  const int64_t threshold = context_ahead ? kAutoGpuMinUnknowns : kAutoGpuMinUnknownsCold;
  const char* context = context_ahead ? "with the GPU context created ahead" : "with no GPU context created ahead";
  if (requested == "auto" && unknowns < threshold)
    return {"cpu", fmt::format("auto: {} unknowns after chain elimination, below the {} from which the GPU finishes "
                               "first {}",
                               unknowns, threshold, context),
            "pcg"};
#ifdef PGSIM_HAVE_CUDA
  std::string why;
  if (gpu::device_available(&why))
    return {"gpu", requested == "gpu" ? "--backend gpu"
                                      : fmt::format("auto: {} unknowns after chain elimination, at least {} {}",
                                                    unknowns, threshold, context),
            "pcg"};
#else
  const std::string why = "this pgsim was built without CUDA";
#endif
  if (requested == "gpu") throw SystemError("--backend gpu: no usable GPU (" + why + ")");
  return {"cpu", "auto: no usable GPU (" + why + ")", "pcg"};
}

BackendChoice choose_transient_backend(const Options& opt, bool moving_pads, int64_t unknowns, int64_t steps,
                                       const std::function<std::optional<int64_t>()>& factor_entries) {
  if (opt.backend == "cpu") return {"cpu", "--backend cpu", opt.solver};
  if (opt.backend != "gpu" && opt.backend != "auto") throw InputError("unknown backend '" + opt.backend + "' (gpu, cpu or auto)");
  if (opt.solver == "direct") {
    if (opt.backend == "gpu") spdlog::warn("--backend gpu: the direct solver (--solver direct) runs on the CPU");
    return {"cpu", "--solver direct: the factorisation runs on the CPU", "direct"};
  }
  std::optional<int64_t> entries;  // the step matrix's factor entries, where auto may factor it
  if (opt.backend == "auto" && !opt.solver_given && unknowns <= kAutoDirectMaxTransientUnknowns)
    entries = factor_entries();
  auto direct = [&](const std::string& why, int64_t most_entries) -> BackendChoice {
    return {"cpu",
            fmt::format("auto: {}{} unknowns and {} factor entries, at most {} and {}, where the factorisation's "
                        "step (CPU) is the fastest",
                        why, unknowns, *entries, kAutoDirectMaxTransientUnknowns, most_entries),
            "direct"};
  };
  if (entries && *entries <= kAutoDirectMaxFactorEntriesBesideGpu) return direct("", kAutoDirectMaxFactorEntriesBesideGpu);
  std::string not_gpu;  // why the GPU does not run it
  const double work = double(unknowns) * double(steps);
  if (moving_pads) {
    not_gpu = "voltage sources with a waveform, which only the CPU engine takes";
    if (opt.backend == "gpu") {
      spdlog::warn("--backend gpu: the time loop runs on the CPU ({})", not_gpu);
      return {"cpu", "--backend gpu: " + not_gpu, "pcg"};
    }
  } else if (opt.backend == "auto" && (unknowns < kAutoGpuMinTransientUnknowns || work < kAutoGpuMinTransientWork)) {
    not_gpu = fmt::format("{} unknowns x {} steps, below the {} unknowns and {:.0e} unknown-steps from which the GPU "
                          "finishes first",
                          unknowns, steps, kAutoGpuMinTransientUnknowns, kAutoGpuMinTransientWork);
  } else {
#ifdef PGSIM_HAVE_CUDA
    std::string why;
    if (gpu::device_available(&why))
      return {"gpu",
              opt.backend == "gpu" ? "--backend gpu"
                                   : fmt::format("auto: {} unknowns x {} steps, at least {:.0e}", unknowns, steps,
                                                 kAutoGpuMinTransientWork),
              "pcg"};
#else
    const std::string why = "this pgsim was built without CUDA";
#endif
    if (opt.backend == "gpu") throw SystemError("--backend gpu: no usable GPU (" + why + ")");
    not_gpu = "no usable GPU (" + why + ")";
  }
  if (entries && *entries <= kAutoDirectMaxFactorEntries) return direct(not_gpu + "; ", kAutoDirectMaxFactorEntries);
  return {"cpu", "auto: " + not_gpu, "pcg"};
}

CmgOptions cmg_options(const Options& opt) {
  CmgOptions o;
  try {
    o.smoother = parse_cmg_smoother(opt.smoother);
  } catch (const std::invalid_argument& e) {
    throw InputError(e.what());
  }
  return o;
}

#ifdef PGSIM_HAVE_CUDA
namespace {
// The GPU solve's settings from the command line, with report.precond.
gpu::GpuSolveSettings gpu_settings(const Options& opt, const RunReport& rep) {
  gpu::GpuSolveSettings s;
  s.precond = rep.precond;
  s.spmv = opt.spmv;
  s.trsv = opt.trsv;
  s.profile = opt.profile;
  return s;
}
}  // namespace

bool gpu_builds_hierarchy(const Options& opt, const RunReport& rep, int32_t rows) {
  const gpu::GpuSolveSettings s = gpu_settings(opt, rep);
  return s.precond != "cmg" || gpu::builds_hierarchy_on_device(s, cmg_options(opt), rows);
}

bool solve_pcg_on_gpu(const CsrMatrix& G, const std::vector<double>& b, std::vector<double>& x,
                      const SolveControl& control, const Options& opt, RunReport& rep) {
  const gpu::GpuSolveSettings s = gpu_settings(opt, rep);
  assign_touched(x, static_cast<size_t>(G.rows));  // the first iterate: zeros
  try {
    // CMG's hierarchy is built once G is on the device, there (gpu/cmg_build.hpp).
    gpu::GpuSolveReport g = s.precond == "cmg" ? gpu::solve_on_gpu(G, b, x, cmg_options(opt), control, s)
                                               : gpu::solve_on_gpu(G, b, x, nullptr, control, s);
    rep.time.setup = g.setup_seconds;
    if (!g.setup_detail.empty()) spdlog::debug("{}", g.setup_detail);
    rep.result = g.result;
    rep.time.upload = g.upload_seconds;
    spdlog::debug("GPU upload {:.3f} s: {}", g.upload_seconds, g.upload_detail);
    rep.time.solve = g.solve_seconds;
    spdlog::debug("GPU solve {:.4f} s: {}", g.solve_seconds, g.solve_detail);
    rep.levels = g.levels;
    rep.peak_device_bytes = g.peak_device_bytes;
    rep.device = g.device + ", SpMV " + g.spmv;
  } catch (const gpu::GpuFailure& e) {
    if (opt.backend == "gpu") throw SystemError(std::string("GPU: ") + e.what());
    spdlog::warn("GPU failed ({}): solving on the CPU instead", e.what());
    rep.levels.clear();
    rep.time.upload = 0;
    return false;
  }
  return true;
}

std::unique_ptr<Stepper> make_gpu_stepper(const StepSystem& system, const std::vector<double>& x0,
                                          const std::vector<Probe>& probes, const SolveControl& control,
                                          const Options& opt, RunReport& rep) {
  const gpu::GpuSolveSettings s = gpu_settings(opt, rep);
  // A V-cycle: the capacitors' conductances make the step matrix strongly diagonally dominant, so
  // the clustering collapses it (100k-node pgsim-gen --tran grid: 70,003 rows -> 9,071 -> 67), and
  // the W-cycle's repeats (5 at level 0) would pass over level 0 eleven times per application.
  // There, 1000 ps of TR steps: 8.2 iterations per step at 11.5 x nnz0 of cycle work each (W),
  // 15.3 at 2.3 x nnz0 (V): 2.7 times less work per step (CPU count of the same operator).
  CmgOptions cmg = cmg_options(opt);
  cmg.v_cycle_rows = std::numeric_limits<int32_t>::max();
  try {
    gpu::GpuStepperReport g;  // cmg: its hierarchy built on the device where it can be (gpu/gpu_stepper.hpp)
    auto stepper = s.precond == "cmg" ? gpu::make_gpu_stepper(system, x0, probes, cmg, control, s, &g)
                                      : gpu::make_gpu_stepper(system, x0, probes, nullptr, control, s, &g);
    rep.time.setup += g.setup_seconds;
    rep.time.upload = g.upload_seconds;
    rep.device = g.device + ", SpMV " + g.spmv;
    return stepper;
  } catch (const gpu::GpuFailure& e) {
    if (opt.backend == "gpu") throw SystemError(std::string("GPU: ") + e.what());
    spdlog::warn("GPU failed ({}): running the transient on the CPU instead", e.what());
    return nullptr;
  }
}

bool run_gpu_loop(const Options& opt, const std::function<void()>& loop) {
  try {
    loop();
    return true;
  } catch (const gpu::GpuFailure& e) {
    if (opt.backend == "gpu") throw SystemError(std::string("GPU: ") + e.what());
    spdlog::warn("GPU failed during the time loop ({}): running it again on the CPU", e.what());
    return false;
  }
}
#else
std::unique_ptr<Stepper> make_gpu_stepper(const StepSystem&, const std::vector<double>&, const std::vector<Probe>&,
                                          const SolveControl&, const Options&, RunReport&) {
  throw SystemError("this pgsim was built without CUDA");
}

bool gpu_builds_hierarchy(const Options&, const RunReport&, int32_t) { return false; }

bool run_gpu_loop(const Options&, const std::function<void()>&) {
  throw SystemError("this pgsim was built without CUDA");
}

bool solve_pcg_on_gpu(const CsrMatrix&, const std::vector<double>&, std::vector<double>&, const SolveControl&,
                      const Options&, RunReport&) {
  throw SystemError("this pgsim was built without CUDA");
}
#endif


}  // namespace pgsim
