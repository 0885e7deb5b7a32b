#pragma once
// How long this process has run: under mpirun, what a rank spent before its run began (the
// program's loading, MPI_Init) is part of the job's wall time but of none of its phases (-v).
namespace pgsim::dist {

// Seconds since this process started, from /proc/self/stat's start time and /proc/uptime (both
// counted from boot, to the kernel's clock tick: 10 ms); negative where they cannot be read.
double process_age_seconds();

}  // namespace pgsim::dist
