#pragma once
// This rank's place among the ranks of its host: under mpirun with --backend gpu it is the CUDA
// device the rank solves on (gpu/nccl_comm.hpp), known before the parse so that the device's
// context can be created beside it (app/distributed_run.cpp).
#include <mpi.h>

namespace pgsim::dist {

struct HostRanks {
  int rank = 0;  // this rank's index among its host's ranks, in the order of their ranks in comm
  int size = 1;  // the ranks of comm on this host
};

// Collective over comm (MPI_Comm_split_type, MPI_COMM_TYPE_SHARED).
inline HostRanks host_ranks(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm host;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &host);
  HostRanks h;
  MPI_Comm_rank(host, &h.rank);
  MPI_Comm_size(host, &h.size);
  MPI_Comm_free(&host);
  return h;
}

}  // namespace pgsim::dist
