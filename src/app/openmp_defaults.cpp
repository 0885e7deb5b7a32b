// pgsim's default OpenMP wait policy: passive (idle threads sleep instead of spinning), unless
// the user set OMP_WAIT_POLICY or GOMP_SPINCOUNT.
//
// Why: libgomp's default lets a thread spin for a while (GOMP_SPINCOUNT 300000) after every
// parallel region before it sleeps. pgsim's phases alternate parallel loops with serial steps
// and run helper threads beside them (the parser's read-ahead, the GPU context's start, the
// voltages file's commit), which the spinning threads take cores from. On the H100 machine
// (16 cores) passive waiting made the host phases of the 7.2M-node grid faster:
// benchmarks/ibmpg/README.md, "OpenMP wait policy", has the command and the figures.
//
// How: libgomp reads its environment once, in its initializer, before main() runs. This file is
// a shared library of its own (pgsim_openmp_defaults, needing only libc) whose initializer sets
// the variable: the dynamic loader runs a library's initializer after those of the libraries it
// needs (libc, whose start resets the environment) and, among libraries unrelated to each other,
// this one before libgomp's (the test pgsim_openmp_waits_passively checks what libgomp read).
// Code in the executable itself runs too late (its initializers run last) or too early (its
// preinit functions run before libc's initializer, which then discards their setenv).
#include "app/openmp_defaults.hpp"

#include <cstdlib>

namespace pgsim {
namespace {

const char* g_policy = "libgomp's default";

__attribute__((constructor)) void default_wait_policy() {
  const char* user = std::getenv("OMP_WAIT_POLICY");
  if (user != nullptr) {
    g_policy = "OMP_WAIT_POLICY from the environment";
  } else if (std::getenv("GOMP_SPINCOUNT") != nullptr) {
    g_policy = "GOMP_SPINCOUNT from the environment";
  } else if (setenv("OMP_WAIT_POLICY", "passive", /*overwrite=*/0) == 0) {
    g_policy = "passive (pgsim's default)";
  }
}

}  // namespace

const char* openmp_wait_policy() { return g_policy; }

}  // namespace pgsim
