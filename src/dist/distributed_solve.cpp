#include "dist/distributed_solve.hpp"

#include <mpi.h>
#include <spdlog/spdlog.h>

#include <array>
#include <optional>
#include <string>
#include <stdexcept>
#include <utility>
#include <vector>

#include "cmg/cmg_preconditioner.hpp"
#include "dist/coarse_problem.hpp"
#include "dist/halo_backend.hpp"
#include "dist/partition.hpp"
#include "dist/step_log.hpp"
#include "dist/two_level.hpp"
#include "mna/host_memory.hpp"
#include "mna/stopwatch.hpp"
#include "pcg/pcg.hpp"
#include "pcg/preconditioner_factory.hpp"

#ifdef PGSIM_HAVE_NCCL
#include "gpu/distributed_pcg.hpp"
#endif

namespace pgsim::dist {
namespace {

// The coarse space of the rank's block, its rows near the cut grouped where all ranks' coarse
// unknowns would exceed kMaxCoarseUnknowns (collective; the same on the CPU and the GPU path).
CoarseSpace bounded_coarse_space(const RankBlock& blk, const CmgHierarchy& h, const BlockPreconditioner& precond) {
  int level = 0;
  CoarseSpace space = build_bounded_coarse_space(blk, h, precond.coarse_layers, kMaxCoarseUnknowns, MPI_COMM_WORLD,
                                                 &level);
  if (blk.rank == 0 && level > 0)
    spdlog::info("global coarse correction: the rows at the cut grouped by their CMG level-{} vertex (one coarse "
                 "unknown each would exceed {})", level, kMaxCoarseUnknowns);
  return space;
}

// Whether the block preconditioner gets the global coarse correction: CMG with --coarse-layers
// >= 0, where some coupling crosses ranks. Where none does, G is block diagonal across the ranks:
// each rank's block CMG is a whole CMG of its part of G (as one process's, whose clusters never
// join unconnected rows), and a coarse correction would carry nothing between ranks, only a
// second level around each rank's own CMG, at the price of its setup and two collectives per
// iteration (measured in docs/distributed.md). Collective where the command line asks for it.
bool with_coarse_correction(const RankBlock& blk, const BlockPreconditioner& precond) {
  if (precond.name != "cmg" || precond.coarse_layers < 0) return false;
  int cut = blk.halo() > 0 ? 1 : 0, anywhere = 0;
  MPI_Allreduce(&cut, &anywhere, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (anywhere == 0 && blk.rank == 0)
    spdlog::info("no coupling crosses the ranks: block CMG alone, without the global coarse correction");
  return anywhere != 0;
}

// The block preconditioner, with the global coarse correction where it applies (the same
// decision on every rank). `two`: the two-level preconditioner when there is one, else null.
std::unique_ptr<Preconditioner> make_preconditioner(RankBlock& blk, const BlockPreconditioner& precond,
                                                    const TwoLevelPreconditioner*& two) {
  if (!with_coarse_correction(blk, precond)) return make_cpu_preconditioner(precond.name, blk.interior, precond.cmg);
  Stopwatch watch;  // -v
  CmgHierarchy h = softened_block_hierarchy(blk, kCutDiagonalShare, precond.cmg);
  const double built = watch.lap();
  const CoarseSpace space = bounded_coarse_space(blk, h, precond);
  const double spaced = watch.lap();
  auto with_coarse = std::make_unique<TwoLevelPreconditioner>(std::make_unique<CmgPreconditioner>(std::move(h)), blk,
                                                              space, MPI_COMM_WORLD);
  two = with_coarse.get();
  if (blk.rank == 0)
    spdlog::debug("rank 0 setup: block CMG {:.3f} s, coarse space {:.3f} s (with the wait for the slowest rank's CMG), "
                  "coarse problem {:.3f} s ({} unknowns)", built,
                  spaced, watch.lap(), two->coarse_unknowns());
  return with_coarse;
}

// The rank's block on its GPU, with the preconditioner of the CPU path: for CMG the global
// coarse correction (its coarse problem built and factored here, on the host; the device gets
// its operators and the rows of E^{-1} this rank reads) or, with --coarse-layers -1 or no cut,
// block CMG alone; other preconditioners on the block.
BlockSolve solve_on_gpu(RankBlock& blk, const SolveControl& control, const BlockPreconditioner& precond,
                       const BlockBackend& backend) {
#ifdef PGSIM_HAVE_NCCL
  BlockSolve s;
  Stopwatch watch;
  std::optional<CmgHierarchy> h;
  std::optional<gpu::DeviceHierarchy> on_device;
  std::optional<gpu::CoarseCorrectionData> coarse;
  // The block's hierarchy is built on the rank's GPU (gpu/device_hierarchy.hpp) where the device
  // builds it, else on the host with level 0 coarsened on the GPU (gpu/cmg_coarsen.hpp): the same
  // bits either way. The coarse space reads its shape.
  const int device = backend.nccl->device();
  CmgOptions cmg = precond.cmg;
  cmg.coarsen_level0 = gpu::level0_coarsening_on(device);
  std::string built_detail = "on the host, level 0 on its GPU";  // -v
  auto build = [&](const CsrMatrix& A) -> const CmgHierarchy& {
    on_device = gpu::DeviceHierarchy::build(A, precond.cmg, device, &built_detail);
    if (on_device) return on_device->shape();
    h = build_cmg_hierarchy(A, cmg);
    return *h;
  };
  if (with_coarse_correction(blk, precond)) {
    const CmgHierarchy* shape = nullptr;
    with_softened_block(blk, kCutDiagonalShare, [&](const CsrMatrix& A) { shape = &build(A); });
    const double built = watch.lap();
    const CoarseSpace space = bounded_coarse_space(blk, *shape, precond);
    const double spaced = watch.lap();
    CoarseProblem problem(blk, space, MPI_COMM_WORLD);
    const double factored = watch.lap();
    s.coarse_unknowns = problem.unknowns();
    s.coarse_factor_nnz = problem.factor_nnz();
    const int64_t positions = problem.operators().positions();
    if (problem.unknowns() > 0) {
      std::vector<double> inverse_rows = problem.inverse_rows();  // reads the operators: before they move
      coarse = gpu::CoarseCorrectionData{problem.take_operators(), std::move(inverse_rows)};
    }
    const double inverted = watch.lap();
    log_step(MPI_COMM_WORLD, fmt::format("GPU setup on rank {}: block CMG {:.3f} s ({}), coarse space {:.3f} s (with "
                                         "the wait for the slowest rank's CMG), coarse problem {:.3f} s ({} unknowns), "
                                         "the {} rows of its inverse this rank reads {:.3f} s",
                                         blk.rank, built, built_detail, spaced, factored, s.coarse_unknowns, positions,
                                         inverted));
    s.setup_seconds = built + spaced + factored + inverted;
  } else if (precond.name == "cmg") {
    build(blk.interior);
    s.setup_seconds = watch.lap();
    log_step(MPI_COMM_WORLD, fmt::format("GPU setup on rank {}: block CMG {:.3f} s ({})", blk.rank, s.setup_seconds,
                                         built_detail));
  }
  const double host_setup_seconds = s.setup_seconds + watch.lap();
  gpu::GpuSolveSettings settings;
  settings.precond = precond.name;
  settings.spmv = backend.spmv;
  settings.profile = backend.profile;
  gpu::GpuBlockReport g = gpu::solve_block_on_gpu(blk, h ? &*h : nullptr, on_device ? &*on_device : nullptr,
                                                  coarse ? &*coarse : nullptr, control, settings, *backend.nccl);
  log_step(MPI_COMM_WORLD, fmt::format("GPU solve on rank {}: upload {:.3f} s (of which {:.3f} s waiting for the NCCL "
                                       "communicator), PCG {:.3f} s; the communicator made beside the reduction in "
                                       "{:.3f} s, its peers connected beside the setup in {:.3f} s",
                                       blk.rank, g.upload_seconds, g.communicator_wait_seconds, g.solve_seconds,
                                       backend.nccl->make_seconds(), backend.nccl->connect_seconds()));
  s.result = g.result;
  s.x = std::move(g.x);
  s.setup_seconds = host_setup_seconds;
  s.upload_seconds = g.upload_seconds;
  s.solve_seconds = g.solve_seconds;
  s.levels = std::move(g.levels);
  s.device = std::move(g.device);
  s.device_state = std::move(g.device_state);
  s.stats.peak_device_bytes = g.peak_device_bytes;
  return s;
#else
  (void)blk, (void)control, (void)precond, (void)backend;
  throw std::logic_error("the distributed GPU solve needs a build with NCCL");  // app/run.cpp refuses earlier
#endif
}

BlockSolve solve_on_cpu(RankBlock& blk, const SolveControl& control, const BlockPreconditioner& precond) {
  BlockSolve s;
  Stopwatch watch;
  const TwoLevelPreconditioner* two = nullptr;
  auto M = make_preconditioner(blk, precond, two);
  s.setup_seconds = watch.lap();
  HaloBackend halo(blk, MPI_COMM_WORLD);
  s.x.assign(static_cast<size_t>(blk.rows()), 0.0);
  s.result = pcg(halo, blk.b, s.x, *M, control);
  s.solve_seconds = watch.lap();
  s.levels = M->levels();
  s.stats.communication_seconds = halo.communication_seconds();
  if (two != nullptr) {
    s.stats.communication_seconds += two->communication_seconds();
    s.coarse_unknowns = two->coarse_unknowns();
    s.coarse_factor_nnz = two->coarse_factor_nnz();
  }
  return s;
}

}  // namespace

BlockSolve solve_block(RankBlock& blk, const SolveControl& control, const BlockPreconditioner& precond,
                       const BlockBackend& backend) {
  BlockSolve s = backend.gpu ? solve_on_gpu(blk, control, precond, backend) : solve_on_cpu(blk, control, precond);
  s.stats.unknowns = blk.rows();
  s.stats.nnz = blk.nnz();
  s.stats.halo = blk.halo();
  s.stats.peak_host_bytes = host_memory().peak;
  s.stats.seconds = s.setup_seconds + s.upload_seconds + s.solve_seconds;
  return s;
}

namespace {

constexpr int kStatFields = 7;

std::array<double, kStatFields> pack(const RankStats& s) {
  return {double(s.unknowns), double(s.nnz), double(s.halo), double(s.peak_host_bytes), double(s.peak_device_bytes),
          s.seconds, s.communication_seconds};
}

RankStats unpack(const double* v) {
  return {int64_t(v[0]), int64_t(v[1]), int64_t(v[2]), uint64_t(v[3]), uint64_t(v[4]), v[5], v[6]};
}

}  // namespace

std::vector<RankStats> gather_rank_stats(const RankStats& mine, MPI_Comm comm) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  const auto packed = pack(mine);
  std::vector<double> all(rank == 0 ? size_t(kStatFields) * size_t(ranks) : 0);
  MPI_Gather(packed.data(), kStatFields, MPI_DOUBLE, all.data(), kStatFields, MPI_DOUBLE, 0, comm);
  std::vector<RankStats> stats;
  for (size_t r = 0; rank == 0 && r < size_t(ranks); ++r) stats.push_back(unpack(&all[r * kStatFields]));
  return stats;
}

}  // namespace pgsim::dist
