#pragma once
// The one-time costs of a process's first GPU solve, paid ahead by a thread while the host parses:
// plain C++, no CUDA headers (src/app calls it).
namespace pgsim::gpu {

// Host wall time of each step in seconds; each is what the first solve would otherwise pay.
struct WarmUpTimes {
  double context = 0;  // creating the CUDA context (driver initialisation, device memory mappings)
  double kernels = 0;  // loading the default solver's kernels (CUDA loads each on first launch by default)
  double graph = 0;    // the first CUDA graph capture, instantiation and launch in the process
  double pinned = 0;   // the first mapped pinned host allocation
};

// Makes `device` the calling thread's current device, creates its context and does the steps of
// WarmUpTimes once; with `node_ids` (a rank of an MPI job), its kernels include the node ids'
// numbering's (gpu/gpu_node_ids.hpp), which one process never runs. Never throws: a failure is
// cleared and left for the solve's own calls to report.
WarmUpTimes warm_up_device(int device, bool node_ids);

}  // namespace pgsim::gpu
