#pragma once
// The CMG preconditioner on the device: the whole hierarchy uploaded once, the cycle of
// cmg/hierarchy.hpp run by kernels with no host round trip.
//  - residual + restriction fused: rc_c = sum_{i in c} b_i - sum over the cluster's nonzeros
//    of a_ij x_j (clusters are contiguous, so their nonzeros are one CSR range);
//  - prolongation + smoothing fused: x' = x + R z is formed on the fly inside the smoother's
//    SpMV, written to the level's other x buffer;
//  - on the first visit x = invD b is never stored, the kernels form it on the fly;
//  - each kernel reads the level's fixed arrays for its items (offsets, its first nonzeros,
//    their clusters and invD; rows of the coarse inverse) before it waits for the kernel before
//    it, so on the latency-bound small levels only the loads of b, x and z follow that wait;
//  - the small levels at the bottom (launch-latency bound) run in one kernel of one
//    thread-block cluster, with cluster barriers between the steps, the coarsest solve included.
// With the Gauss-Seidel smoother (CmgHierarchy::smoother == sgs, colourings filled by
// use_gauss_seidel) every level but the coarsest runs: a zeroing memset, then per repeat one launch
// per colour (forward), the fused residual + restriction, a prolongation add, one launch per
// colour (backward). No tail kernel then; float_values works with either smoother.
#include <memory>

#include "cmg/hierarchy.hpp"
#include "gpu/cmg_build.hpp"
#include "gpu/device_preconditioner.hpp"

namespace pgsim::gpu {

// Host wall time of the upload's parts in seconds (benchmarks/gpu/solve_bench prints them).
struct CmgUploadTimes {
  double allocate = 0;        // cudaMalloc of the levels' arena and the coarse inverse
  double copy = 0;            // staged copies (filling pinned buffers, waiting for the DMA) and their final wait
  double long_items = 0;      // tables of the rows and clusters too long for a lane group (and sgs colours)
  double coarse_inverse = 0;  // the dense inverse of the coarsest level (host)
  double total = 0;           // the whole constructor
};

struct CmgDeviceOptions {
  int32_t tail_rows = 6144;        // levels with at most this many rows run in the tail kernel
  int tail_blocks = 8;             // blocks (of 1024 threads) in the tail kernel's cluster, 1 to 8
  int32_t tail_max_coarse = 512;   // largest coarsest level the tail takes: its few blocks read the
                                   // whole dense inverse (8 rows^2 bytes) on every visit
  bool float_values = false;       // matrix values and invD in float32 (vectors stay double)
  bool widen_lanes = true;         // small levels: up to a warp per cluster / row (false: fixed widths)
  bool dependent_launches = true;  // each kernel of the cycle may be scheduled while the one before
                                   // runs (programmatic dependent launch, launch.cuh)
  bool fetch_early = true;         // each cycle kernel loads the level's fixed arrays for its items (offsets,
                                   // first nonzeros, their clusters and invD, the coarse inverse's rows)
                                   // before it waits for the kernel before (false: after)
  bool profile = false;            // time each level with CUDA events (synchronizes every apply)
  CmgUploadTimes* upload_times = nullptr;  // filled when not null
};

std::unique_ptr<DevicePreconditioner> make_device_cmg(const CmgHierarchy& h, const CmgDeviceOptions& options);
// The same for a hierarchy built on the device (gpu/cmg_build.hpp), whose arrays it keeps where
// they are: no level is copied. Double values only (options.float_values: std::invalid_argument).
std::unique_ptr<DevicePreconditioner> make_device_cmg(DeviceCmgHierarchy h, const CmgDeviceOptions& options);

// Loads the kernels of the double-valued cycle, both smoothers (launch.cuh load_kernels).
void load_cmg_kernels();

}  // namespace pgsim::gpu
