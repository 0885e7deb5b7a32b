#pragma once
// The GPU back end as the application sees it: plain C++, no CUDA headers, so src/app compiles
// the same with or without the CUDA toolkit (it includes this only under PGSIM_HAVE_CUDA).
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cmg/builder.hpp"
#include "cmg/hierarchy.hpp"
#include "mna/csr.hpp"
#include "pcg/preconditioner.hpp"
#include "pcg/solve_result.hpp"

namespace pgsim::gpu {

// A CUDA or cuSPARSE failure, or a hierarchy the device cannot take; the message names the call.
class GpuFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct GpuSolveSettings {
  std::string precond = "jacobi";  // cmg (needs the hierarchy), jacobi, ic0, none
  std::string spmv;                // SpMV layout of the system matrix: seg, csr, cusparse; empty: the default
  std::string trsv;                // ic0's triangular solves (gpu/sptrsv.hpp names); empty: the default
  bool float_hierarchy = false;    // CMG level values in float32
  bool profile = false;            // per-level kernel time from CUDA events (no CUDA graphs then)
};

struct GpuSolveReport {
  SolveResult result;
  double setup_seconds = 0;   // the hierarchy's build, when solve_on_gpu builds it (given CmgOptions)
  std::string setup_detail;   // the build's device part by step, for the log (empty: none)
  double upload_seconds = 0;  // matrix, hierarchy and vectors to the device
  std::string upload_detail;  // upload_seconds by part, for the log
  double solve_seconds = 0;   // PCG on the device, from the first kernel to x back on the host
  std::string solve_detail;   // solve_seconds by part, for the log
  size_t peak_device_bytes = 0;
  std::string device, spmv;
  std::vector<LevelStats> levels;  // CMG levels; seconds = kernel time when profiling
};

std::vector<std::string> gpu_preconditioner_names();
std::string default_spmv_layout();
std::vector<std::string> trsv_names();  // accepted by GpuSolveSettings::trsv
std::string default_trsv();

// Solves G x = b on the device; x holds the initial guess. `hierarchy` is required for cmg.
GpuSolveReport solve_on_gpu(const CsrMatrix& G, const std::vector<double>& b, std::vector<double>& x,
                            const CmgHierarchy* hierarchy, const SolveControl& control,
                            const GpuSolveSettings& settings);

// Whether that solve builds the hierarchy of a G of `rows` rows wholly on the device: the Jacobi
// smoother where level 0 is not the coarsest (gpu/cmg_build.hpp builds_on_device), double values,
// and an SpMV layout that keeps G as CSR there (not seg).
bool builds_hierarchy_on_device(const GpuSolveSettings& settings, const CmgOptions& cmg, int32_t rows);

// Level 0's coarsening of a matrix, made on the device (CmgOptions::coarsen_level0's contract,
// cmg/builder.hpp).
using Level0Coarsening = std::function<LevelCoarsening(const CsrMatrix& G)>;
// A Level0Coarsening that copies its matrix to `device` (made the calling thread's current
// device) and coarsens it there: for a matrix not on the device yet (a rank's block, whose
// solve uploads it in another form). Its GPU failures are GpuFailures.
Level0Coarsening level0_coarsening_on(int device);

// The same with the cmg preconditioner's hierarchy built once G is on the device, with `cmg`'s
// options (settings.precond cmg; otherwise `cmg` is not read). Wholly on the device
// (gpu/cmg_build.hpp) where builds_hierarchy_on_device; else on the host, level 0 coarsened on the
// device (gpu/cmg_coarsen.hpp). Either way the hierarchy is build_cmg_hierarchy(G, cmg), bit for
// bit.
GpuSolveReport solve_on_gpu(const CsrMatrix& G, const std::vector<double>& b, std::vector<double>& x,
                            const CmgOptions& cmg, const SolveControl& control, const GpuSolveSettings& settings);

}  // namespace pgsim::gpu
