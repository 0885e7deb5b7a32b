#pragma once
// Where the PCG runs: --backend gpu|cpu|auto. Plain C++: the GPU side is reached through
// gpu/gpu_solver.hpp only when the build has CUDA (PGSIM_HAVE_CUDA).
#include <string>
#include <thread>
#include <vector>

#include "app/options.hpp"
#include "app/run.hpp"
#include "cmg/builder.hpp"
#include "mna/csr.hpp"
#include "pcg/solve_result.hpp"

namespace pgsim {

// While alive, a thread creates the CUDA context when the run may use the GPU (a CUDA build,
// --solver pcg, --backend gpu or auto), so that its cost overlaps parsing and reduction.
class GpuContextWarmUp {
 public:
  explicit GpuContextWarmUp(const Options& opt);
  ~GpuContextWarmUp();
  GpuContextWarmUp(const GpuContextWarmUp&) = delete;
  GpuContextWarmUp& operator=(const GpuContextWarmUp&) = delete;

 private:
  std::thread thread_;
};

// "gpu" or "cpu". auto: the GPU when one is usable, else the CPU with a message saying why.
// gpu with no usable GPU: SystemError.
std::string resolve_backend(const std::string& requested);

// The CMG options the command line asks for (--smoother); InputError for a bad name.
CmgOptions cmg_options(const Options& opt);

// PCG on the GPU with report.precond (cmg: the hierarchy is built on the CPU first, time.setup):
// fills report.result, time.setup, time.upload, time.solve, levels, peak_device_bytes and device.
// A device failure (out of memory, a failed call) is a SystemError naming the call when the user
// demanded --backend gpu; under auto it is a warning, x is reset and false says "solve on the CPU".
bool solve_pcg_on_gpu(const CsrMatrix& G, const std::vector<double>& b, std::vector<double>& x,
                      const SolveControl& control, const Options& opt, RunReport& report);

}  // namespace pgsim
