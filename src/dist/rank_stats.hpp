#pragma once
// What each rank reports of its part of a run (--json per_rank).
#include <cstdint>

namespace pgsim::dist {

struct RankStats {
  int64_t unknowns = 0;            // rows this rank owns
  int64_t nnz = 0;                 // stored entries of its rows (interior and boundary)
  int64_t halo = 0;                // other ranks' rows its rows touch (doubles received per SpMV)
  uint64_t peak_host_bytes = 0;    // the process's peak resident memory over the whole run (every rank: parse to voltages file)
  uint64_t peak_device_bytes = 0;  // GPU memory at its peak; 0 on the CPU back end
  double seconds = 0;              // preconditioner setup and PCG on this rank
  double communication_seconds = 0;  // of which waiting for halo messages and collectives (dots, coarse correction)
};

}  // namespace pgsim::dist
