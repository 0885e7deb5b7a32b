#pragma once
// Catch2 tests that start MPI programs under mpirun (issue 17). Such a test calls
// skip_without_mpirun() first: it is skipped (exit 77) when the build has no MPI or no mpirun
// was found (PGSIM_MPIRUN, set by tests/CMakeLists.txt, names it).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

namespace pgsim::test {

inline void skip_without_mpirun() {
#if !defined(PGSIM_MPIRUN)
  WARN("no MPI in this build, or no mpirun: skipped");
  std::exit(77);
#endif
}

// Runs a shell command, its output to `log`; its exit code (-1 when it did not exit).
inline int run_command(const std::string& cmd, const std::string& log) {
  const int status = std::system((cmd + " >\"" + log + "\" 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

#if defined(PGSIM_MPIRUN)
// The start of a command line running a program on `ranks` MPI processes, `threads` OpenMP
// threads each (the CI machine has 2 cores). CI runs as root, which mpirun refuses without
// --allow-run-as-root; --oversubscribe: more ranks than cores. `timeout`: a rank left waiting
// would otherwise hang the test.
inline std::string mpirun(int ranks, int threads = 1) {
  return "timeout 300 \"" PGSIM_MPIRUN "\" --allow-run-as-root --oversubscribe -x OMP_NUM_THREADS=" +
         std::to_string(threads) + " -np " + std::to_string(ranks) + " ";
}
#endif

}  // namespace pgsim::test
