#include "dist/mpi_session.hpp"

#include <cstdlib>
#include <string>

#ifdef PGSIM_HAVE_MPI
#include <mpi.h>
#endif

namespace pgsim::dist {

int launcher_size() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE"})
    if (const char* v = std::getenv(var)) return std::atoi(v);
  return std::getenv("PMIX_RANK") ? 1 : 0;
}

int launched_local_rank() {
#ifdef PGSIM_HAVE_MPI
  if (launcher_size() > 1)
    for (const char* var : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"})
      if (const char* v = std::getenv(var)) return std::atoi(v);
#endif
  return -1;
}

void prefer_shared_memory_transports() {
#if defined(PGSIM_HAVE_MPI) && defined(OPEN_MPI)
  const char* size = std::getenv("OMPI_COMM_WORLD_SIZE");
  const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  if (size == nullptr || local == nullptr || std::string(size) != local || std::atoi(size) < 2) return;
  if (std::getenv("OMPI_MCA_pml") || std::getenv("OMPI_MCA_btl")) return;
  // Open MPI 5 renamed the shared-memory transport sm (vader stays a name for it there).
  ::setenv("OMPI_MCA_pml", "ob1", 0);
  ::setenv("OMPI_MCA_btl", OMPI_MAJOR_VERSION >= 5 ? "self,sm" : "self,vader", 0);
#endif
}

MpiSession::MpiSession([[maybe_unused]] int* argc, [[maybe_unused]] char*** argv) {
  const int launched = launcher_size();
  if (launched == 0) return;
#ifdef PGSIM_HAVE_MPI
  MPI_Init(argc, argv);
  initialized_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
#else
  if (launched > 1)
    launch_error_ = "started as one of " + std::to_string(launched) +
                    " MPI processes, but this pgsim was built without MPI: run it without mpirun";
#endif
}

MpiSession::~MpiSession() { finalize(); }

void MpiSession::finalize() {
#ifdef PGSIM_HAVE_MPI
  if (initialized_ && !finalized_) MPI_Finalize();
#endif
  finalized_ = true;
}

void MpiSession::abort(int code) const {
#ifdef PGSIM_HAVE_MPI
  if (initialized_) MPI_Abort(MPI_COMM_WORLD, code);
#endif
  std::exit(code);
}

}  // namespace pgsim::dist
