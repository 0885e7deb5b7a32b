#pragma once
// Moving a RankBlock (partition.hpp) from rank 0 to its rank: the interim input side, in which
// rank 0 holds the whole system (docs/distributed.md).
#include <mpi.h>

#include "dist/partition.hpp"

namespace pgsim::dist {

// Blocking point-to-point: rank 0 sends, `block.rank` receives (arrays are sent with their length).
void send_block(const RankBlock& block, MPI_Comm comm);
RankBlock receive_block(MPI_Comm comm);

}  // namespace pgsim::dist
