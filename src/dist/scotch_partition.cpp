#include "dist/scotch_partition.hpp"

#include <ptscotch.h>
#include <spdlog/spdlog.h>

#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>

#include "dist/collective_error.hpp"
#include "dist/row_aggregates.hpp"
#include "dist/step_log.hpp"
#include "mna/stopwatch.hpp"

namespace pgsim::dist {
namespace {

// The seed of the random generator of every call (Scotch mixes in the rank, SCOTCH_randomProc).
constexpr SCOTCH_Num kSeed = 1;

// Rounds of local aggregation before Scotch (dist/row_aggregates.hpp): each divides the vertices
// by about 2 to 4. The 5M-node grid at P = 4 (CPU, one thread a rank, 2 cores): the rows
// themselves 48 PCG iterations, Scotch 3.6 s; 1 round 50, 1.7 s; 2 rounds 47, 0.7 s (aggregation
// 0.55 s); 3 rounds 90, 0.26 s: aggregates of 16 to 32 rows cut worse.
constexpr int kAggregateRounds = 2;

// This rank's aggregates (dist/row_aggregates.hpp) as Scotch's distributed graph (compact, base
// 0): vert (aggregates + 1) offsets into edge and weight, vertex weights its rows.
struct LocalGraph {
  std::vector<SCOTCH_Num> vert, edge, weight, rows;
};

// Scotch's integers from the aggregates' graph; false where one does not fit SCOTCH_Num.
bool scotch_graph(const AggregateGraph& a, LocalGraph& g) {
  constexpr int64_t kMax = std::numeric_limits<SCOTCH_Num>::max();
  bool fits = a.first + a.aggregates() <= kMax && a.ptr.back() <= kMax;
  const auto narrow = [&](const std::vector<int64_t>& from, std::vector<SCOTCH_Num>& to) {
    to.resize(from.size());
    for (size_t k = 0; k < from.size(); ++k) {
      fits = fits && from[k] <= kMax;
      to[k] = SCOTCH_Num(from[k]);
    }
  };
  narrow(a.ptr, g.vert);
  narrow(a.adjacent, g.edge);
  narrow(a.weight, g.weight);
  narrow(a.rows, g.rows);
  return fits;
}

// Scotch's objects of one call, each freed (in the reverse order of their making) by the
// destructor once made. `bound` is `graph` seen through `context` (SCOTCH_contextBindDgraph); it
// owns nothing.
struct Scotch {
  SCOTCH_Context context;
  SCOTCH_Dgraph graph, bound;
  SCOTCH_Strat strategy;
  bool have_context = false, have_graph = false, have_strategy = false;

  ~Scotch() {
    if (have_strategy) SCOTCH_stratExit(&strategy);
    if (have_graph) SCOTCH_dgraphExit(&graph);
    if (have_context) SCOTCH_contextExit(&context);
  }
};

// Throws the same error on every rank where `status` (a Scotch call's) is not 0 on any.
void agree_on(int status, const char* call, MPI_Comm comm) {
  agree_on_failure(comm, [&] {
    if (status != 0)
      throw std::runtime_error(std::string("PT-Scotch: ") + call + " failed (status " + std::to_string(status) +
                               "; Scotch's message is above)");
  });
}

}  // namespace

std::vector<int32_t> scotch_partition(const DistributedRows& mine, int parts, MPI_Comm comm) {
  if (parts < 1) throw std::invalid_argument("scotch_partition: no parts");
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  Stopwatch watch;  // -v: the aggregation and Scotch's partition (dist/step_log.hpp)
  const AggregateGraph aggregates = aggregate_rows(mine, kAggregateRounds, comm);
  const double aggregated = watch.lap();
  LocalGraph g;
  int fits = 1;
  agree_on_failure(comm, [&] { fits = scotch_graph(aggregates, g); });
  MPI_Allreduce(MPI_IN_PLACE, &fits, 1, MPI_INT, MPI_MIN, comm);
  if (!fits)  // the same on every rank
    throw std::runtime_error("PT-Scotch: the aggregates' graph exceeds its index type (" +
                             std::to_string(8 * sizeof(SCOTCH_Num)) + "-bit SCOTCH_Num)");

  Scotch s;
  // Local steps (no communication), their failures agreed on at once.
  int status = SCOTCH_contextInit(&s.context);
  s.have_context = status == 0;
  if (status == 0) {
    SCOTCH_randomProc(rank);  // then cloned and seeded: this call's generator, whatever came before
    status = SCOTCH_contextRandomClone(&s.context);
  }
  if (status == 0) {
    SCOTCH_contextRandomSeed(&s.context, kSeed);
    status = SCOTCH_contextOptionSetNum(&s.context, SCOTCH_OPTIONNUMDETERMINISTIC, 1);
  }
  if (status == 0) status = SCOTCH_contextThreadSpawn(&s.context, 1, nullptr);  // one thread: no thread started
  agree_on(status, "SCOTCH_context*", comm);
  status = SCOTCH_dgraphInit(&s.graph, comm);
  s.have_graph = status == 0;
  agree_on(status, "SCOTCH_dgraphInit", comm);

  const auto n = SCOTCH_Num(aggregates.aggregates()), my_arcs = g.vert.back();
  agree_on(SCOTCH_dgraphBuild(&s.graph, 0, n, n, g.vert.data(), nullptr, g.rows.data(), nullptr, my_arcs, my_arcs,
                              g.edge.data(), nullptr, g.weight.data()),
           "SCOTCH_dgraphBuild", comm);
  agree_on(SCOTCH_contextBindDgraph(&s.context, &s.graph, &s.bound), "SCOTCH_contextBindDgraph", comm);
  status = SCOTCH_stratInit(&s.strategy);
  s.have_strategy = status == 0;
  if (status == 0)
    status = SCOTCH_stratDgraphMapBuild(&s.strategy, SCOTCH_STRATDEFAULT, SCOTCH_Num(ranks), SCOTCH_Num(parts),
                                        kBalance - 1);
  agree_on(status, "SCOTCH_strat*", comm);
  std::vector<SCOTCH_Num> part(size_t(n) + 1);  // never empty: a rank without rows passes a valid pointer
  agree_on(SCOTCH_dgraphPart(&s.bound, SCOTCH_Num(parts), &s.strategy, part.data()), "SCOTCH_dgraphPart", comm);
  log_step(comm, fmt::format("PT-Scotch on rank {}: {} rows in {} aggregates ({} arcs) in {:.3f} s, parts {:.3f} s", rank,
                             mine.rows.rows, n, my_arcs, aggregated, watch.lap()));
  std::vector<int32_t> row_part(size_t(mine.rows.rows));
#pragma omp parallel for schedule(static, 65536)
  for (std::ptrdiff_t i = 0; i < std::ptrdiff_t(row_part.size()); ++i)
    row_part[size_t(i)] = int32_t(part[size_t(aggregates.aggregate_of_row[size_t(i)])]);
  return row_part;
}

}  // namespace pgsim::dist
