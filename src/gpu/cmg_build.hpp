#pragma once
// The whole CMG hierarchy built on the device, where the GPU solve applies it: every level
// coarsened there (gpu/cmg_coarsen.hpp), then renumbered from the coarsest level down and
// permuted there, so only a few sizes and the coarsest level (for its factor) cross to the host
// and no level is uploaded. Bit for bit build_cmg_hierarchy(G, options) (cmg/builder.hpp), the same
// steps in the same numberings with every sum in the host's order:
//  - the renumbering is a stable sort of each level's vertices by their cluster's new number, as
//    the host's counting sort is;
//  - a renumbered row's columns are distinct, so its sorted order is the host's whatever sort
//    makes it;
//  - level 0's diagonal is the sum of its off-diagonals' magnitudes in G's column order, the ground
//    edge last (sdd_to_laplacian), the ground's in its rows' order.
// The cycle's repeats and weights come from the levels' sizes through the host's own
// cycle_of_levels, the coarsest factor from factor_coarsest on the host's copy of that level.
// On the H100 machine (benchmarks/ibmpg/README.md, session 14) the build took 0.041 s of the 7.2M-
// node grid's run, against 0.143 s on the host with level 0 coarsened on the device, and 0.24
// against 0.87 s at 50M nodes.
#include <cstdint>
#include <string>
#include <vector>

#include "cmg/builder.hpp"
#include "cmg/hierarchy.hpp"
#include "gpu/device_buffer.hpp"

namespace pgsim::gpu {

// CmgLevel's arrays (cmg/hierarchy.hpp) on the device.
struct DeviceCmgLevel {
  DeviceCsr A;
  DeviceBuffer<double> inv_diag;
  DeviceBuffer<int32_t> cluster_ptr;  // empty on the coarsest level
  int repeats = 1;
  std::vector<double> weights;
};

// CmgHierarchy on the device (Jacobi smoother): what make_device_cmg takes (gpu/cmg_device.hpp).
struct DeviceCmgHierarchy {
  int32_t n = 0;
  DeviceBuffer<int32_t> level0_of_unknown;
  int32_t level0_ground = 0;
  std::vector<DeviceCmgLevel> levels;
  CoarseFactor coarse;
};

// Host wall time of the build's steps in seconds (each ends with the device idle).
struct DeviceBuildTimes {
  double laplacian = 0;      // level 0 from G
  double clustering = 0;     // every level's, `rounds` of cutting the tall trees in all
  double galerkin = 0;       // every coarse level
  double renumber = 0;       // the numberings, coarsest first, with the cluster ranges
  double permute = 0;        // every level into its numbering, with its inverse diagonal
  double coarse_factor = 0;  // the coarsest level to the host and factor_coarsest
  double total = 0;
  int rounds = 0;
  // "in T s: laplacian ..., clustering ... (R rounds), ..., coarse factor ... (L levels)": -v's
  // detail of a build of `levels` levels.
  std::string text(size_t levels) const;
};

// Whether build_cmg_hierarchy_on_device makes the hierarchy for these options and a G of `rows`
// rows: with the Jacobi smoother (the Gauss-Seidel colouring is the host's) where level 0 is not
// the coarsest (a system that small is stored as it is).
bool builds_on_device(const CmgOptions& options, int32_t rows);

// build_cmg_hierarchy(G, options) for G's device copy, left on the device. Requires
// builds_on_device(options, G.rows) (else std::invalid_argument). Throws GpuError on a CUDA
// failure, and as the host's build on a matrix it rejects. times: filled when not null.
DeviceCmgHierarchy build_cmg_hierarchy_on_device(const DeviceCsrView& G, const CmgOptions& options,
                                                 DeviceBuildTimes* times = nullptr);

// The hierarchy copied to the host (the tests compare it with build_cmg_hierarchy's).
CmgHierarchy to_host(const DeviceCmgHierarchy& h);

// Loads the build's own kernels into the current context (the warm-up's; launch.cuh
// load_kernels). Never throws.
void load_build_kernels();

}  // namespace pgsim::gpu
