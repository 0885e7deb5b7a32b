#include "app/backend.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>
#include <stdexcept>

#include "app/system_error.hpp"
#include "parser/input_error.hpp"
#ifdef PGSIM_HAVE_CUDA
#include <chrono>

#include "cmg/builder.hpp"
#include "gpu/device_info.hpp"
#include "gpu/gpu_solver.hpp"
#endif

namespace pgsim {

GpuContextWarmUp::GpuContextWarmUp([[maybe_unused]] const Options& opt) {
#ifdef PGSIM_HAVE_CUDA
  if (opt.solver == "pcg" && opt.backend != "cpu" && !opt.export_only) thread_ = std::thread(gpu::create_context);
#endif
}

GpuContextWarmUp::~GpuContextWarmUp() {
  if (thread_.joinable()) thread_.join();
}

std::string resolve_backend(const std::string& requested) {
  if (requested == "cpu") return "cpu";
  if (requested != "gpu" && requested != "auto") throw InputError("unknown backend '" + requested + "' (gpu, cpu or auto)");
#ifdef PGSIM_HAVE_CUDA
  std::string why;
  if (gpu::device_available(&why)) return "gpu";
#else
  const std::string why = "this pgsim was built without CUDA";
#endif
  if (requested == "gpu") throw SystemError("--backend gpu: no usable GPU (" + why + ")");
  spdlog::info("no usable GPU ({}): solving on the CPU", why);
  return "cpu";
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
bool solve_pcg_on_gpu(const CsrMatrix& G, const std::vector<double>& b, std::vector<double>& x,
                      const SolveControl& control, const Options& opt, RunReport& rep) {
  gpu::GpuSolveSettings s;
  s.precond = rep.precond;
  s.spmv = opt.spmv;
  s.trsv = opt.trsv;
  s.profile = opt.profile;
  const auto t0 = std::chrono::steady_clock::now();
  std::optional<CmgHierarchy> hierarchy;
  if (s.precond == "cmg") hierarchy = build_cmg_hierarchy(G, cmg_options(opt));
  rep.time.setup = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  try {
    gpu::GpuSolveReport g = gpu::solve_on_gpu(G, b, x, hierarchy ? &*hierarchy : nullptr, control, s);
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
    std::fill(x.begin(), x.end(), 0.0);
    rep.levels.clear();
    rep.time.upload = 0;
    return false;
  }
  return true;
}
#else
bool solve_pcg_on_gpu(const CsrMatrix&, const std::vector<double>&, std::vector<double>&, const SolveControl&,
                      const Options&, RunReport&) {
  throw SystemError("this pgsim was built without CUDA");
}
#endif

}  // namespace pgsim
