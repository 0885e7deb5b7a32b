#pragma once
// The distributed row graph partitioned by PT-Scotch (SCOTCH_dgraphPart): every rank hands in its
// own rows and gets their parts back, no rank holding the whole graph. The repartition
// (dist/repartition.hpp) calls it where the parse's split cuts couplings, in a build with
// PT-Scotch (CMake's PGSIM_HAVE_PTSCOTCH); other builds partition blocks of rows on rank 0.
//
// Why the rows' own graph and not blocks of consecutive rows: blocks are pieces of one wire,
// which vias tie to other layers' pieces, and a partition of such blocks finds no thin cut. On
// the 1M-node pgsim-gen grid at P = 4 and 8 (CPU), METIS on blocks took 125 and 260 PCG
// iterations, PT-Scotch on the rows 38 and 39 (docs/distributed.md). Scotch is handed each rank's
// rows contracted into connected aggregates of its own rows (dist/row_aggregates.hpp, two rounds:
// 4 to 16 rows each on pgsim-gen's grids), which is Scotch's own first coarsening done without
// exchanges: on the 5M-node grid at P = 4, 47 iterations against the rows' 48, Scotch in 0.7 s
// against 3.6 s.
//
// Contract.
//   In: `mine`, this rank's rows of a symmetric matrix (global columns, the diagonal included or
//     not; a rank may hold no rows); `parts` >= 1, the same on every rank.
//   Graph: a vertex per aggregate of a rank's rows, weighted by its rows; an edge per pair of
//     aggregates a coupling joins, weighted by the sum of coupling_weight (dist/partition.hpp: the
//     conductance in units of the system's weakest nonzero coupling, all ranks', within [1,
//     1000]) over the couplings between them, as METIS's edges are weighted.
//   Out: one part in [0, parts) per row of `mine`, in its order (its aggregate's). Each part
//     within kBalance (dist/repartition.hpp) of global_rows / parts rows, as Scotch's strategy is
//     asked to keep (on the aggregates' weights: the rows).
//   Collective over `comm`: every rank calls it once with the same `parts`.
//   Deterministic: the same rows on the same ranks give the same parts on every run. Scotch runs
//     with a fixed strategy (SCOTCH_stratDgraphMapBuild, SCOTCH_STRATDEFAULT), its deterministic
//     option, one thread per rank, and a random generator of its own, seeded with a constant and
//     the rank at every call (Scotch's global one is seeded from the clock unless built with
//     COMMON_RANDOM_FIXED_SEED, and moves on from call to call). Not across P, nor across Scotch
//     versions.
//   Threads: one per rank. Debian's Scotch is built with threads: by default it would start a
//     thread per core of the host in every rank, each bound to a core, beside the rank's OpenMP
//     team, and its threads call MPI, which needs MPI_THREAD_MULTIPLE (pgsim's MPI_Init asks for
//     no thread support).
//   Errors: a failure of any Scotch call on any rank (Scotch prints its own message on that
//     rank's standard error), or an aggregates' graph that SCOTCH_Num cannot count, throws the same
//     std::runtime_error on every rank (dist/collective_error.hpp), naming the call; as does
//     std::bad_alloc on any rank after the aggregation. No rank is left waiting. parts < 1:
//     std::invalid_argument (on every rank, as `parts` is the same everywhere; Scotch itself does
//     not refuse 0).
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "dist/repartition.hpp"

namespace pgsim::dist {

std::vector<int32_t> scotch_partition(const DistributedRows& mine, int parts, MPI_Comm comm);

}  // namespace pgsim::dist
