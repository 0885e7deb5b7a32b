#pragma once
// PCG on P ranks: every rank solves with a preconditioner built on its own diagonal block
// (block Jacobi: additive Schwarz without overlap, a fixed SPD operator), the block being the
// distributed reduction's (distributed_reduce.hpp). Two back ends:
//  - CPU: the one PCG iteration (pcg/pcg.hpp) over a HaloBackend (MPI), and for CMG the global
//    coarse correction of two_level.hpp;
//  - GPU (a build with CUDA, MPI and NCCL): each rank on its own GPU, the one GPU PCG loop over
//    NCCL (gpu/distributed_pcg.hpp), the same preconditioner (the coarse correction's coarse
//    solve as a dense inverse on the device, gpu/two_level_device.hpp).
#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "cmg/builder.hpp"
#include "dist/partition.hpp"
#include "dist/rank_stats.hpp"
#include "mna/csr.hpp"
#include "pcg/preconditioner.hpp"
#include "pcg/solve_result.hpp"

namespace pgsim::gpu {
class NcclCommAhead;  // gpu/nccl_comm_ahead.hpp (a build with NCCL)
}

namespace pgsim::dist {

// What every rank builds its preconditioner from (each rank reads them from its own command line).
struct BlockPreconditioner {
  std::string name;  // a make_cpu_preconditioner name, applied to the rank's diagonal block
  CmgOptions cmg;
  // With name "cmg": the global coarse correction (two_level.hpp) whose coarse space keeps the
  // rows within this many links of the cut alone (coarse_space.hpp); < 0: none, block CMG only.
  // Other preconditioners have no hierarchy to aggregate by and run without one.
  int coarse_layers = 0;
};

// Where every rank solves (each rank reads it from its own command line).
struct BlockBackend {
  bool gpu = false;     // each rank on its own GPU (requires PGSIM_HAVE_NCCL)
  std::string spmv;     // GPU: the interior's SpMV layout (gpu/spmv.hpp names); empty: the default
  bool profile = false;  // GPU: kernel by kernel instead of CUDA graphs, CMG levels timed
  gpu::NcclCommAhead* nccl = nullptr;  // GPU: the job's communicator, made ahead by the caller (required)
};

// One rank's share of a distributed solve.
struct BlockSolve {
  SolveResult result;
  std::vector<double> x;  // the solution over the block's rows, local order
  RankStats stats;
  double setup_seconds = 0;   // the preconditioner's build on the host
  double upload_seconds = 0;  // GPU: block, preconditioner and PCG graphs to the device (gpu/distributed_pcg.hpp)
  double solve_seconds = 0;
  std::vector<LevelStats> levels;
  std::string device;  // the rank's GPU; empty on the CPU back end
  int64_t coarse_unknowns = 0, coarse_factor_nnz = 0;
  std::shared_ptr<void> device_state;  // GPU: the solve's device objects (gpu/distributed_pcg.hpp GpuBlockReport)
};

// Collective over MPI_COMM_WORLD: every rank calls it with the block it holds (the distributed
// reduction's, dist/distributed_reduce.hpp) and the same control
// and preconditioner; the PCG iteration from x = 0. `control.progress` must be empty except on
// one rank. With the coarse correction, block.interior is softened in place while its CMG
// hierarchy is built, and is the same bits again after (two_level.hpp softened_block_hierarchy).
BlockSolve solve_block(RankBlock& block, const SolveControl& control, const BlockPreconditioner& precond,
                       const BlockBackend& backend);

// Collective: every rank's figures, by rank, on rank 0 (empty elsewhere).
std::vector<RankStats> gather_rank_stats(const RankStats& mine, MPI_Comm comm);

}  // namespace pgsim::dist
