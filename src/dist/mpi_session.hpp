#pragma once
// This process's place in an MPI job: rank and size, MPI initialised and finalised once.
// Without mpirun (or in a build without MPI) the process is the whole job, rank 0 of 1, and
// MPI is never initialised: pgsim runs exactly as a plain program.
#include <string>

namespace pgsim::dist {

class MpiSession {
 public:
  // Joins the job when mpirun (or another PMI launcher) started this process.
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool is_root() const { return rank_ == 0; }
  // Whether MPI was started (a launcher announced a job): then finalize() or the destructor
  // must finalize it.
  bool initialized() const { return initialized_; }
  // Finalizes MPI when it was started and is not yet finalized (collective: every rank calls
  // it); nothing else. No MPI call may follow.
  void finalize();
  // Non-empty when a launcher started several processes but this build cannot join them.
  const std::string& launch_error() const { return launch_error_; }

  // Ends every rank of the job with `code` (a failure in the middle of collective work, where
  // the other ranks would otherwise wait forever). Without MPI: std::exit(code).
  [[noreturn]] void abort(int code) const;

 private:
  int rank_ = 0, size_ = 1;
  bool initialized_ = false, finalized_ = false;
  std::string launch_error_;
};

// The job size a launcher announced in the environment (Open MPI, PMIx, MPICH's Hydra); 0: no
// launcher started this process (with or without MPI in the build).
int launcher_size();

// Before MPI_Init: this process's place among its host's processes, as the launcher announced it
// in the environment (Open MPI, MPICH's Hydra, Slurm), when it started several processes and this
// build can join them; else -1. A rank's GPU work can begin from it while MPI_Init runs (about a
// quarter of a second); the host's ranks as MPI counts them (dist/host_ranks.hpp) remain what
// decides the device.
int launched_local_rank();

// Before any thread starts (it sets environment variables) and before MPI_Init: where Open MPI
// started every rank of the job on this host (OMPI_COMM_WORLD_LOCAL_SIZE = OMPI_COMM_WORLD_SIZE)
// and the user chose no transport (no OMPI_MCA_pml or OMPI_MCA_btl in the environment, where
// mpirun's --mca puts them too), chooses the ob1 messaging layer over shared memory alone
// (`--mca pml ob1 --mca btl self,vader`). Why: on one host every message goes through shared
// memory anyway (pgsim's device data never goes through MPI: NCCL), but Open MPI's default
// MPI_Init first tries UCX and the other transports: on the 2-GPU machine, where UCX cannot be
// selected, a rank's run began 0.26-0.28 s after its process started, and 0.08-0.09 s with this
// choice (-v's first line; session 22 in benchmarks/dist/README.md). Across hosts nothing changes.
// A build without Open MPI does nothing.
void prefer_shared_memory_transports();

}  // namespace pgsim::dist
