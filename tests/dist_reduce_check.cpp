// Run under mpirun by tests/test_dist_mpi.cpp: the distributed reduction
// (src/dist/distributed_reduce.hpp) on each rank's part of a netlist against the single-process
// reduce() of the whole one. Usage: dist_reduce_check [--memory [--file-order]] [--gpu] [--limit N|nnz] NETLIST.
// With --gpu each rank makes the super-nodes' first pass and stamps its rows on a GPU (rank r on
// device r mod the GPUs it sees; dist/distributed_reduce.hpp), in the checks below (the first
// pass's marks and merging elements also against the host's) and in reduce_distributed(), its
// part's elements held there only, as the GPU reader of a range leaves them
// (dist/elements_on_device.hpp). Each rank
// parses the whole file (a test may) and cuts its RankNetlist from it with split_netlist(),
// exactly the contract of dist/rank_netlist.hpp; then
//   - every rank's rows of G and b, before elimination, equal reduce()'s rows bit for bit, and
//     every owned node's unknown and offset equal reduce()'s;
//   - a netlist reduce() rejects is rejected on every rank with the same text;
//   - reduce_distributed(), in file order and repartitioned, solved by the CPU distributed PCG
//     (solve_block) to a relative residual of 1e-12, gives owned_voltages() within 1e-9 V of
//     the direct solve of reduce()'s G.
// With --memory first, no checks: each rank cuts its part, frees the whole netlist, and reports
// the peak resident memory that reduce_distributed() (repartitioned, unless --file-order), the
// solve and owned_voltages() add on top of its RankNetlist (docs/distributed.md's bytes per node
// per rank come from it).
// With --limit N (N entries, or "nnz": one less than the last rank's rows' stored entries, which
// the stamp finds after its exchange), no checks: each rank stamps its rows (with --gpu on its
// GPU), the last with stamp_owned_rows' max_entries at N; every rank must throw the same
// InputError, not wait for the last (dist/collective_error.hpp FailureAgreement). Each rank
// prints "rank R: limit: TEXT".
// Rank 0 prints "reduce checks passed on P ranks" (or "... error matched on P ranks: TEXT") at the
// end, one line per failed check before; exit 1 on a failure.
#include <mpi.h>
#ifdef PGSIM_HAVE_NCCL
#include <cuda_runtime_api.h>
#endif

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "dist/distributed_reduce.hpp"
#include "dist/distributed_solve.hpp"
#ifdef PGSIM_HAVE_NCCL
#include "gpu/device_stamp.hpp"
#endif
#include "mna/host_memory.hpp"
#include "mna/reduce.hpp"
#include "parser/input_error.hpp"
#include "pcg/direct.hpp"

using namespace pgsim;
using namespace pgsim::dist;

namespace {

int failures = 0;

void fail(int rank, const std::string& what) {
  ++failures;
  std::printf("FAIL rank %d: %s\n", rank, what.c_str());
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Rank `rank`'s part of nl: the elements cut at rank * E / ranks, its nodes those first seen in
// its elements (a serial parse numbers nodes by first appearance, which this checks).
RankNetlist split_netlist(const Netlist& nl, int rank, int ranks) {
  const size_t elements = nl.elements.size();
  const auto cut = [&](int r) { return elements * size_t(r) / size_t(ranks); };
  RankNetlist part;
  part.rank = rank;
  part.ranks = ranks;
  part.total_nodes = nl.node_count();
  part.files = nl.files;
  uint32_t next = 1;  // the next node id a first appearance must have
  for (size_t k = 0; k < elements; ++k) {
    if (k == cut(rank)) part.first_node = next;
    const Element& e = nl.elements[k];
    for (uint32_t node : {e.plus, e.minus}) {
      if (node == 0 || node < next) continue;
      if (node != next) throw std::runtime_error("node ids are not in order of first appearance");
      if (k >= cut(rank) && k < cut(rank + 1) && part.owned_names.intern(nl.node_names[node]) != node - part.first_node)
        throw std::runtime_error("a node name repeats");
      ++next;
    }
    if (k >= cut(rank) && k < cut(rank + 1)) {
      // One name per element, duplicates too: element k of the part is named element_names[k].
      const std::string_view name = nl.element_names[uint32_t(k)];
      const uint64_t at = part.element_names.arena_bytes();
      part.element_names.extend(1, name.size());
      part.element_names.place(part.element_names.size() - 1, at, name);
      part.elements.push_back(e);
    }
  }
  if (cut(rank) == elements) part.first_node = next;
  if (next != nl.node_count()) throw std::runtime_error("a node appears in no element");
  return part;
}

// The rank's rows against reduce()'s.
void check_rows(const OwnedRows& rows, const ReducedSystem& sys, const SuperNodes& sn, const RankNetlist& part) {
  const int rank = part.rank;
  if (rows.unknown_begin.front() != 0 || rows.unknown_begin.back() != sys.unknowns())
    fail(rank, "the ranks' unknowns do not cover reduce()'s");
  int bad_rows = 0;
  for (int32_t i = 0; i < rows.rows(); ++i) {
    const int32_t u = rows.first_unknown + i;
    bool same = rows.G.ptr[i + 1] - rows.G.ptr[i] == sys.G.ptr[u + 1] - sys.G.ptr[u] && same_bits(rows.b[i], sys.b[u]) &&
                sn.first_node(u) == sys.node_of_unknown[u];
    for (int32_t k = 0; same && k < rows.G.ptr[i + 1] - rows.G.ptr[i]; ++k)
      same = rows.G.col[rows.G.ptr[i] + k] == sys.G.col[sys.G.ptr[u] + k] &&
             same_bits(rows.G.val[rows.G.ptr[i] + k], sys.G.val[sys.G.ptr[u] + k]);
    bad_rows += !same;
  }
  if (bad_rows > 0) fail(rank, std::to_string(bad_rows) + " row(s) differ from reduce()'s");
  int bad_nodes = 0;
  for (uint32_t i = 0; i < part.owned(); ++i) {
    const uint32_t v = part.first_node + i;
    bad_nodes += sn.unknown_of(v) != sys.unknown_of_node[v] || !same_bits(sn.offset_of(v), sys.offset_of_node[v]);
  }
  if (bad_nodes > 0) fail(rank, std::to_string(bad_nodes) + " node(s) with another unknown or offset than reduce()'s");
}

// part, its elements held on GPU `device` only (dist/elements_on_device.hpp); part itself where device < 0.
RankNetlist held_on(const RankNetlist& part, [[maybe_unused]] int device) {
  RankNetlist held = part;
#ifdef PGSIM_HAVE_NCCL
  if (device >= 0) {
    held.device_elements = std::make_shared<gpu::DeviceElements>(device, part.elements);
    FillVector<Element>().swap(held.elements);
  }
#endif
  return held;
}

// reduce_distributed() with or without the repartition, solved by the CPU distributed PCG:
// owned_voltages() against the direct solve's voltages of every node (`reference`).
void check_solve(const RankNetlist& part, bool repartition, const std::vector<double>& reference, int device) {
  const int rank = part.rank;
  const char* how = repartition ? "repartitioned" : "file order";
  RankSystem rs = reduce_distributed(held_on(part, device), MPI_COMM_WORLD, repartition, {}, {}, device);
  SolveControl control;
  control.tolerance = 1e-12;
  control.max_iterations = 5000;
  const BlockSolve s = solve_block(rs.block, control, BlockPreconditioner{"cmg", CmgOptions{}, 0}, BlockBackend{});
  if (!s.result.converged) fail(rank, std::string(how) + ": PCG did not converge");
  const std::vector<double> v = owned_voltages(rs, s.x, MPI_COMM_WORLD);
  double worst = 0;
  for (uint32_t i = 0; i < part.owned(); ++i) worst = std::max(worst, std::fabs(v[i] - reference[part.first_node + i]));
  if (!(worst <= 1e-9)) fail(rank, std::string(how) + ": voltages " + std::to_string(worst) + " V from the direct solve's");
  MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  int64_t elsewhere = 0;  // owned nodes whose unknown another rank owns (a super-node across ranks)
  for (uint32_t i = 0; i < part.owned(); ++i) {
    const int32_t u = rs.super_nodes.unknown_of(part.first_node + i);
    elsewhere += u >= 0 && owner_of_row(rs.unknown_begin, u) != rank;
  }
  MPI_Allreduce(MPI_IN_PLACE, &elsewhere, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  std::printf("%s, rank %d: %u nodes, %d unknowns, %d kept, halo %d, %d iterations\n", how, rank, part.owned(),
              rs.unknowns(), rs.block.rows(), rs.block.halo(), s.result.iterations);
  std::fflush(stdout);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("%s: worst voltage difference %.3g V; %lld node(s) with another rank's unknown\n", how, worst,
                static_cast<long long>(elsewhere));
}

// --limit: the stamp (on GPU `device`, or the host where < 0) with the last rank's max_entries at
// `limit` ("nnz": its rows' entries less one, from a stamp without a limit first).
void stamp_with_limit(const char* netlist, const std::string& limit, int rank, int ranks, int device) {
  const RankNetlist part = split_netlist(parse_netlist(netlist), rank, ranks);
  const auto stamp = [&](int64_t max_entries) {  // the elements up again each time: the GPU stamp releases them
    const RankNetlist held = held_on(part, device);
    ScannedOnDevice up = scan_on_device(held, device);
    const SuperNodes sn(held, MPI_COMM_WORLD, up.elements ? &up.scan : nullptr);
    return stamp_owned_rows(held, sn, MPI_COMM_WORLD, up.elements.get(), rank == ranks - 1 ? max_entries : INT32_MAX);
  };
  int64_t max_entries = 0;
  if (limit == "nnz") max_entries = stamp(INT32_MAX).G.nnz() - 1;
  else max_entries = std::stoll(limit);
  std::string what = "no error";
  try {
    stamp(max_entries);
  } catch (const InputError& e) {
    what = e.what();
  }
  std::printf("rank %d: limit: %s\n", rank, what.c_str());
  std::fflush(stdout);
}

// The Linux peak-resident counter (VmHWM) reset to the current resident size.
void reset_peak_memory() {
  if (FILE* f = std::fopen("/proc/self/clear_refs", "w")) {
    std::fputs("5", f);
    std::fclose(f);
  }
}

// --memory: per rank, what the distributed reduction and solve add to the resident memory.
void measure_memory(const char* netlist, bool repartition, int rank, int ranks, int device) {
  RankNetlist part;
  {
    const Netlist nl = parse_netlist(netlist);
    part = split_netlist(nl, rank, ranks);
  }
  reset_peak_memory();
  const uint64_t base = host_memory().resident;
  RankSystem rs = reduce_distributed(part, MPI_COMM_WORLD, repartition, {}, {}, device);
  const HostMemory reduced = host_memory();
  SolveControl control;
  control.tolerance = 1e-10;
  const BlockSolve s = solve_block(rs.block, control, BlockPreconditioner{"cmg", CmgOptions{}, 0}, BlockBackend{});
  const std::vector<double> v = owned_voltages(rs, s.x, MPI_COMM_WORLD);
  const HostMemory done = host_memory();
  const double nodes = part.owned();
  for (int q = 0; q < ranks; ++q) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (q != rank) continue;
    std::printf("rank %d of %d: %u nodes, %zu elements, %d unknowns, %d kept, halo %d, %d iterations (coarse %lld); "
                "held before: %.1f MB; reduction peak +%.1f MB (%.0f B/node), held after it +%.1f MB (%.0f B/node); "
                "with solve and voltages peak +%.1f MB (%.0f B/node); super-nodes %.1f MB\n",
                rank, ranks, part.owned(), part.elements.size(), rs.unknowns(), rs.block.rows(), rs.block.halo(),
                s.result.iterations, static_cast<long long>(s.coarse_unknowns), double(base) / 1e6,
                double(reduced.peak - base) / 1e6, double(reduced.peak - base) / nodes,
                double(reduced.resident - base) / 1e6, double(reduced.resident - base) / nodes,
                double(done.peak - base) / 1e6, double(done.peak - base) / nodes, double(rs.super_nodes.bytes()) / 1e6);
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  std::vector<std::string> args(argv + 1, argv + argc);
  const auto flag = [&](const char* name) {
    const auto it = std::find(args.begin(), args.end(), name);
    if (it == args.end()) return false;
    args.erase(it);
    return true;
  };
  const bool memory = flag("--memory"), file_order = flag("--file-order");
  std::string limit;
  if (const auto it = std::find(args.begin(), args.end(), "--limit"); it != args.end() && it + 1 != args.end()) {
    limit = *(it + 1);
    args.erase(it, it + 2);
  }
  int device = -1;  // the host stamp
  if (flag("--gpu")) {
#ifdef PGSIM_HAVE_NCCL
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
      if (rank == 0) std::printf("--gpu: no GPU\n");
      MPI_Finalize();
      return 2;
    }
    device = rank % devices;
#else
    if (rank == 0) std::printf("--gpu: this build has no GPU stamp\n");
    MPI_Finalize();
    return 2;
#endif
  }
  if (args.size() != 1 || (file_order && !memory)) {
    if (rank == 0) std::printf("usage: dist_reduce_check [--memory [--file-order]] [--gpu] [--limit N|nnz] NETLIST\n");
    MPI_Finalize();
    return 2;
  }
  const char* netlist = args[0].c_str();
  if (memory) {
    measure_memory(netlist, !file_order, rank, ranks, device);
    MPI_Finalize();
    return 0;
  }
  if (!limit.empty()) {
    stamp_with_limit(netlist, limit, rank, ranks, device);
    MPI_Finalize();
    return 0;
  }
  std::string matched_error;
  {
    const Netlist nl = parse_netlist(netlist);
    std::string serial_error;
    ReducedSystem sys;
    try {
      sys = reduce(nl);
    } catch (const InputError& e) {
      serial_error = e.what();
    }
    const RankNetlist part = split_netlist(nl, rank, ranks);
    try {
      // With --gpu, as reduce_distributed() does: the super-nodes' first pass and the stamp on the GPU.
      const RankNetlist held = held_on(part, device);
      ScannedOnDevice up = scan_on_device(held, device);
      if (up.elements) {  // the GPU's merging elements are the host's
        const ElementScan& scan = up.scan;
        uint64_t differ = 0;
        for (size_t i = 0; i < scan.merging.size(); ++i)
          differ += scan.merging[i] >= part.elements.size() ||
                    std::memcmp(&scan.merging_elements[i], &part.elements[scan.merging[i]], sizeof(Element)) != 0;
        if (differ > 0) fail(rank, std::to_string(differ) + " merging element(s) from the GPU differ from the host's");
      }
      const SuperNodes sn(held, MPI_COMM_WORLD, up.elements ? &up.scan : nullptr);
      if (up.elements) {  // the GPU's first pass marks exactly the host pass's nodes of other ranks
        const SuperNodes on_host(part, MPI_COMM_WORLD);
        const SubsetArrays a = sn.lookup().foreign, b = on_host.lookup().foreign;
        if (a.word_count != b.word_count || !std::equal(a.words, a.words + a.word_count, b.words))
          fail(rank, "the first pass on the GPU marked other nodes of other ranks than the host's");
      }
      const OwnedRows rows = stamp_owned_rows(held, sn, MPI_COMM_WORLD, up.elements.get());
      if (!serial_error.empty()) fail(rank, "the distributed reduction accepts what reduce() rejects: " + serial_error);
      check_rows(rows, sys, sn, part);
      std::vector<double> x;
      solve_direct(sys.G, sys.b, x);
      const std::vector<double> reference = node_voltages(sys, x);
      for (bool repartition : {false, true}) check_solve(part, repartition, reference, device);
    } catch (const InputError& e) {
      if (serial_error.empty()) fail(rank, std::string("the distributed reduction rejects what reduce() accepts: ") + e.what());
      else if (serial_error != e.what()) fail(rank, "error text '" + std::string(e.what()) + "', reduce()'s '" + serial_error + "'");
      else matched_error = serial_error;
    }
  }
  std::fflush(stdout);
  MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0 && failures == 0) {
    if (matched_error.empty()) std::printf("reduce checks passed on %d ranks\n", ranks);
    else std::printf("error matched on %d ranks: %s\n", ranks, matched_error.c_str());
  }
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
