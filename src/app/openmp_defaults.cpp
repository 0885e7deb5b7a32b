// pgsim's default OpenMP wait policy: passive (idle threads sleep instead of spinning), unless
// the user set OMP_WAIT_POLICY or GOMP_SPINCOUNT. Linked into the pgsim executable only.
//
// Why: libgomp's default lets a thread spin for a while after every parallel region before it
// sleeps. pgsim's phases alternate parallel loops with serial steps and run helper threads beside
// them (the parser's read-ahead, the GPU context's start, the voltages file's commit), which the
// spinning threads take cores from. On the H100 machine (16 cores; .dev-free command and figures in
// benchmarks/ibmpg/README.md, "OpenMP wait policy") the 7.2M-node grid ran 2.37-2.44 s end to end
// with OMP_WAIT_POLICY=passive against 2.59-2.69 s with the default, every host phase faster,
// and ibmpg1 0.096 s against 0.103 s.
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
