#include "dist/scotch_partition.hpp"

#include <ptscotch.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

#include "dist/collective_error.hpp"
#include "dist/partition.hpp"
#include "parser/default_init.hpp"

namespace pgsim::dist {
namespace {

// The seed of the random generator of every call (Scotch mixes in the rank, SCOTCH_randomProc).
constexpr SCOTCH_Num kSeed = 1;

// This rank's rows as Scotch's distributed graph (compact, base 0): vert (rows + 1) offsets into
// edge and weight, an arc per off-diagonal entry to its column's global vertex.
struct LocalGraph {
  std::vector<SCOTCH_Num> vert;
  FillVector<SCOTCH_Num> edge, weight;
};

// vert, from each row's off-diagonal entries; the smallest nonzero |off-diagonal| among them
// (infinity where there is none).
double count_arcs(const DistributedRows& mine, LocalGraph& g) {
  const CsrMatrix& m = mine.rows;
  const int64_t first = mine.first_row;
  g.vert.assign(size_t(m.rows) + 1, 0);
  double weakest = std::numeric_limits<double>::infinity();
#pragma omp parallel for schedule(static, 4096) reduction(min : weakest)
  for (int32_t i = 0; i < m.rows; ++i) {
    SCOTCH_Num arcs = 0;
    for (int32_t k = m.ptr[size_t(i)]; k < m.ptr[size_t(i) + 1]; ++k)
      if (m.col[size_t(k)] != first + i) {
        ++arcs;
        if (m.val[size_t(k)] != 0) weakest = std::min(weakest, std::fabs(m.val[size_t(k)]));
      }
    g.vert[size_t(i) + 1] = arcs;
  }
  std::partial_sum(g.vert.begin(), g.vert.end(), g.vert.begin());
  return weakest;
}

// edge and weight, `weakest` the system's (all ranks').
void fill_arcs(const DistributedRows& mine, double weakest, LocalGraph& g) {
  const CsrMatrix& m = mine.rows;
  const int64_t first = mine.first_row;
  g.edge.resize(size_t(g.vert.back()));
  g.weight.resize(size_t(g.vert.back()));
#pragma omp parallel for schedule(static, 4096)
  for (int32_t i = 0; i < m.rows; ++i) {
    SCOTCH_Num at = g.vert[size_t(i)];
    for (int32_t k = m.ptr[size_t(i)]; k < m.ptr[size_t(i) + 1]; ++k)
      if (m.col[size_t(k)] != first + i) {
        g.edge[size_t(at)] = SCOTCH_Num(m.col[size_t(k)]);
        g.weight[size_t(at++)] = SCOTCH_Num(coupling_weight(m.val[size_t(k)], weakest));
      }
  }
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
  LocalGraph g;
  double weakest = 0;
  agree_on_failure(comm, [&] { weakest = count_arcs(mine, g); });
  MPI_Allreduce(MPI_IN_PLACE, &weakest, 1, MPI_DOUBLE, MPI_MIN, comm);
  int64_t arcs = g.vert.back();
  MPI_Allreduce(MPI_IN_PLACE, &arcs, 1, MPI_INT64_T, MPI_SUM, comm);
  if (arcs > std::numeric_limits<SCOTCH_Num>::max())  // the same on every rank
    throw std::runtime_error("PT-Scotch: the row graph's " + std::to_string(arcs) + " arcs exceed its index type (" +
                             std::to_string(8 * sizeof(SCOTCH_Num)) + "-bit SCOTCH_Num)");
  agree_on_failure(comm, [&] { fill_arcs(mine, weakest, g); });

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

  const auto n = SCOTCH_Num(mine.rows.rows), my_arcs = g.vert.back();
  agree_on(SCOTCH_dgraphBuild(&s.graph, 0, n, n, g.vert.data(), nullptr, nullptr, nullptr, my_arcs, my_arcs,
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
  return std::vector<int32_t>(part.begin(), part.begin() + n);
}

}  // namespace pgsim::dist
