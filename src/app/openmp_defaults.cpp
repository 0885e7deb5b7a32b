// pgsim's default OpenMP wait policy: passive (idle threads sleep instead of spinning), unless
// the user set OMP_WAIT_POLICY or GOMP_SPINCOUNT. Linked into the pgsim executable only.
//
// Why: libgomp's default lets a thread spin for a while after every parallel region before it
// sleeps. pgsim's phases alternate parallel loops with serial steps and run helper threads beside
// them (the parser's read-ahead, the GPU context's start, the voltages file's commit), which the
// spinning threads take cores from. On the H100 machine (16 cores) passive waiting made every host
// phase of the 7.2M-node grid faster and the 16-thread CPU solve no slower: benchmarks/ibmpg/README.md,
// "OpenMP wait policy", has the command and the figures.
//
// How: libgomp reads its environment once, in its own initializer, before main() runs; the only
// code of the executable that runs earlier is its DT_PREINIT_ARRAY, which the dynamic loader runs
// before the initializers of every shared library. setenv() does not overwrite: a value the user
// gave (either variable) is kept.
#include <cstdlib>

namespace {

void default_wait_policy(int, char**, char**) {
  if (std::getenv("GOMP_SPINCOUNT") == nullptr) setenv("OMP_WAIT_POLICY", "passive", /*overwrite=*/0);
}

}  // namespace

__attribute__((section(".preinit_array"), used)) void (*const pgsim_openmp_defaults)(int, char**, char**) =
    default_wait_policy;
