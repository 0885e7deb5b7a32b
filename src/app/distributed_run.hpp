#pragma once
// The pipeline of an MPI job of several ranks (mpirun -np P pgsim ..., issue 17), run by every
// rank alike, no rank holding the whole netlist or matrix (docs/distributed.md):
//   parse     dist/distributed_parse.hpp    each rank its byte range, node ids through hash owners
//   reduce    dist/distributed_reduce.hpp   super-nodes, rows stamped, METIS repartition, chains
//   solve     dist/distributed_solve.hpp    PCG over the ranks' blocks, CPU (MPI) or GPU (NCCL)
//   write     app/distributed_voltages.hpp  one voltages file, each rank writing its nodes' lines
// Rank 0 reports for the job: the log, --json (with per_rank) and --profile.
//
// What runs in one process only: --solver direct, --compare, --heatmap, --export-system,
// transient netlists, standard input and gzip: an InputError before any work. The IR-drop
// summary is not computed in a distributed run (it needs every node's net: a global union-find
// over the resistors that is not built); rank 0 says so.
//
// Errors: what concerns the input or the outputs (a bad netlist, a floating part, an unwritable
// output, a solve that did not converge) is thrown on every rank alike, and main.cpp turns it
// into the same exit code everywhere, rank 0 alone logging it. A failure of one rank inside
// collective work (memory, a device) ends the job through MpiSession::abort.
#include <memory>
#include <vector>

#include "app/backend.hpp"
#include "app/options.hpp"
#include "app/run.hpp"
#include "dist/distributed_reduce.hpp"
#include "dist/mpi_session.hpp"
#include "dist/rank_netlist.hpp"

namespace pgsim {

// A rank's largest data: its part of the netlist (the owned names, for the voltages file), its
// system, and its nodes' voltages. run_distributed() keeps them in the caller's when given one
// (main.cpp: a rank about to exit leaves them to the kernel, as one process leaves its RunData),
// else in its own, freed when it returns. The system is released (left empty) once the voltages
// are recovered, before the names are restored for the voltages file.
struct DistributedRunData {
  dist::RankNetlist netlist;
  dist::RankSystem system;
  std::vector<double> voltages;
  // GPU: the solve's device objects and the NCCL communicator, kept once the solve is done:
  // releasing them waits on the device and on NCCL's threads, on the way to the voltages file.
  std::shared_ptr<void> gpu;
};

// Every rank of a job of mpi.size() > 1. The report is complete on rank 0 (per_rank, levels,
// times); the other ranks' reports hold what they computed themselves. `early`: a warm-up of this
// rank's GPU begun before MPI_Init (main.cpp), used where it runs on the device the rank takes;
// else the rank begins its own.
RunReport run_distributed(const Options& options, const dist::MpiSession& mpi, DistributedRunData* data = nullptr,
                          const GpuContextWarmUp* early = nullptr);

}  // namespace pgsim
