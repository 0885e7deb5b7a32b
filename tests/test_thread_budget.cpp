// Threads follow the work (app/thread_budget.hpp): --threads is the cap, a small input uses fewer.
#include <catch2/catch.hpp>
#include <algorithm>
#include <omp.h>

#include "app/run.hpp"
#include "app/thread_budget.hpp"
#include "test_util.hpp"

using namespace pgsim;

TEST_CASE("threads_for gives one thread per grain of work, within 1 and the cap", "[threads]") {
  CHECK(threads_for(0, 100, 16) == 1);
  CHECK(threads_for(1, 100, 16) == 1);
  CHECK(threads_for(100, 100, 16) == 1);
  CHECK(threads_for(101, 100, 16) == 2);
  CHECK(threads_for(900, 100, 16) == 9);
  CHECK(threads_for(UINT64_MAX, 100, 16) == 16);
  CHECK(threads_for(UINT64_MAX, 100, 1) == 1);
  CHECK(threads_for(30635, kNodesPerThread, 16) == 15);  // ibmpg1's nodes
  CHECK(threads_for(2396624, kParseBytesPerThread, 16) == 10);  // and bytes
  CHECK(threads_for(1000000, kNodesPerThread, 16) == 16);
}

TEST_CASE("an MPI rank's default threads: its share of the host's cores (less one on the CPU back end), within the cores it may use", "[threads]") {
  // The 2-GPU machine: 32 cores, 2 ranks. The CPU back end leaves a core for the rank's other threads.
  CHECK(rank_threads(32, 2, 32, true).threads == 15);  // mpirun --bind-to none: every core allowed
  CHECK(rank_threads(32, 2, 32, true).share == 15);
  CHECK(!rank_threads(32, 2, 32, true).bound_below_share());
  CHECK(rank_threads(32, 2, 16, true).threads == 15);  // --map-by slot:PE=16
  CHECK(rank_threads(32, 2, 1, true).threads == 1);    // OpenMPI's default binding at -np 2: a core each
  CHECK(rank_threads(32, 2, 1, true).bound_below_share());
  CHECK(rank_threads(32, 1, 32, true).threads == 32);  // one rank on its host keeps every core
  CHECK(rank_threads(16, 1, 8, true).threads == 8);
  CHECK(rank_threads(2, 2, 2, true).threads == 1);     // the CI machine: never below one
  CHECK(rank_threads(2, 4, 2, true).threads == 1);
  CHECK(rank_threads(64, 4, 64, true).threads == 15);
  CHECK(rank_threads(0, 0, 0, true).threads == 1);     // nonsense counts give one thread
  // A GPU rank keeps its whole share.
  CHECK(rank_threads(32, 2, 32, false).threads == 16);
  CHECK(rank_threads(32, 2, 32, false).share == 16);
  CHECK(!rank_threads(32, 2, 32, false).bound_below_share());
  CHECK(rank_threads(32, 2, 16, false).threads == 16);  // --map-by slot:PE=16: exactly its share
  CHECK(rank_threads(32, 2, 15, false).bound_below_share());
  CHECK(rank_threads(64, 4, 64, false).threads == 16);
  CHECK(rank_threads(2, 2, 2, false).threads == 1);
  CHECK(rank_threads(0, 0, 0, false).threads == 1);
}

TEST_CASE("a core another thread keeps busy is left to it, within the cap", "[threads]") {
  const int before = omp_get_max_threads();
  const int cores = omp_get_num_procs();
  omp_set_num_threads(cores);
  {
    ThreadCountScope threads;
    CHECK(threads.limit_to(UINT64_MAX, 1) == cores);
    CHECK(threads.limit_to(UINT64_MAX, 1, 1) == std::max(cores - 1, 1));
    CHECK(threads.limit_to(UINT64_MAX, 1, cores) == 1);  // never fewer than one
    CHECK(threads.limit_to(2, 1, 1) == std::min(2, std::max(cores - 1, 1)));
  }
  omp_set_num_threads(1);
  {
    ThreadCountScope threads;  // a cap below the cores is not lowered further
    CHECK(threads.limit_to(UINT64_MAX, 1, 1) == 1);
  }
  omp_set_num_threads(2 * cores);
  {
    ThreadCountScope threads;  // more threads than cores, as asked, when no core is busy
    CHECK(threads.limit_to(UINT64_MAX, 1) == 2 * cores);
    CHECK(threads.limit_to(UINT64_MAX, 1, 1) == std::max(cores - 1, 1));
  }
  omp_set_num_threads(before);
}

TEST_CASE("the text size is known ahead for plain regular files only", "[threads]") {
  test::TempDir dir;
  CHECK(netlist_text_bytes(dir.write("g.sp", "R1 a 0 1\n")) == std::optional<uint64_t>(9));
  CHECK_FALSE(netlist_text_bytes(dir.write("g.sp.gz", std::string("\x1f\x8b", 2) + "compressed")));
  CHECK_FALSE(netlist_text_bytes("-"));
  CHECK_FALSE(netlist_text_bytes(dir.file("missing.sp")));
  CHECK_FALSE(netlist_text_bytes(dir.file("")));  // a folder
}

TEST_CASE("a small run uses one thread whatever the cap, and leaves the cap as it was", "[threads]") {
  test::TempDir dir;
  const int before = omp_get_max_threads();
  omp_set_num_threads(8);
  Options opt;
  opt.netlist = dir.write("g.sp", "R1 n1 n2 1\nR2 n2 n3 1\nV1 n1 0 1.0\nI1 n3 0 1m\n.end\n");
  opt.backend = "cpu";
  opt.quiet = true;
  const RunReport r = run(opt);
  CHECK(r.parse_threads == 1);
  CHECK(r.threads == 1);
  CHECK(omp_get_max_threads() == 8);
  omp_set_num_threads(before);
}
