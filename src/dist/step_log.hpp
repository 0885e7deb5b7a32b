#pragma once
// The -v lines of the distributed steps (parse, reduction, voltages), one per rank. Rank 0 alone
// logs (the others run at warning level), but its own times cannot show the load balance: a rank
// that waits in an exchange for a slower one reports the wait as its exchange's time, and the
// slower rank's work is nowhere. So each rank formats its own line and rank 0 logs them all, in
// rank order.
#include <mpi.h>

#include <string>

namespace pgsim::dist {

// Collective, once per job before the steps: every rank learns whether rank 0 logs at debug level
// (-v), which only rank 0's logger knows. Until it is called (tests, benchmarks), log_step is local.
void share_step_log(MPI_Comm comm);

// `line` (this rank's, naming it) logged at debug level. When share_step_log found rank 0 at debug
// level: collective, rank 0 gathers every rank's line and logs them in rank order (the others'
// lines cost one small gather to rank 0, which waits for them there rather than in the next
// exchange). Otherwise local: rank 0 logs its own line if its level allows, the others nothing.
void log_step(MPI_Comm comm, const std::string& line);

}  // namespace pgsim::dist
