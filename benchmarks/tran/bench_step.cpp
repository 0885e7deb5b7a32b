// Where a CPU transient step's time goes: runs a netlist's time loop with the factorisation
// (what `pgsim --solver direct` does per step, chains eliminated) and times each part of every
// step, in microseconds per step: S(t) (SourceChanges), the right-hand side, the chains'
// condensation, the kept system's solve (LdlSolve on THREADS threads, default all, and for
// comparison on one and CHOLMOD's cholmod_solve2 on the same matrix), the chains' recovery, the
// history update. One process, so the parts compare with each other even on a shared machine.
// Reproduce (benchmarks/tran/README.md):
//   build/benchmarks/tran/bench_step ../shared/data/ibmpg1t.spice [STEPS [THREADS]]
#include <algorithm>
#include <omp.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "mna/chain_elimination.hpp"
#include "mna/reduce.hpp"
#include "parser/input_error.hpp"
#include "parser/netlist.hpp"
#include "pcg/direct.hpp"
#include "tran/integrate.hpp"
#include "tran/source_changes.hpp"
#include "tran/step_system.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Part {
  const char* name;
  double seconds = 0;
};

}  // namespace

int main(int argc, char** argv) {
  using namespace pgsim;
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_step NETLIST [STEPS [THREADS]]  (default: the .tran line's steps, all threads)\n");
    return 2;
  }
  try {
    Netlist nl = parse_netlist(argv[1]);
    if (!nl.transient.tran) throw InputError(std::string(argv[1]) + " has no .tran line");
    const TranSpec spec = *nl.transient.tran;
    const int64_t steps = argc > 2 ? std::stoll(argv[2]) : step_count(spec.tstop, spec.tstep);
    const int threads = argc > 3 ? std::stoi(argv[3]) : omp_get_max_threads();
    prepare_sources(nl, spec.tstep, spec.tstop);
    const ReducedSystem dc = reduce(nl);
    std::vector<double> x_dc;
    solve_direct(dc.G, dc.b, x_dc);
    StepSystem sys = build_step_system(nl, Integration::Trapezoidal, spec.tstep);
    std::vector<double> x;
    start_from_dc(sys, nl, node_voltages(dc, x_dc), x);
    const EliminatedSystem chains = eliminate_chains(sys.reduced.G, std::vector<double>(x.size(), 0.0));
    const auto factor_start = Clock::now();
    DirectFactor own(chains.G, threads);
    const double factor_seconds = std::chrono::duration<double>(Clock::now() - factor_start).count();
    DirectFactor serial(chains.G), cholmod(chains.G, 1, true);
    SourceChanges sources(sys);
    std::vector<double> changes(sys.sources.size()), voltage_changes, b, rhs(x.size()), b_kept(chains.kept.size()),
        x_kept(chains.kept.size()), x_other(chains.kept.size());
    const std::string solve_name = "solve (LdlSolve, " + std::to_string(own.threads()) + " thr)";
    Part parts[] = {{"sources S(t)"}, {"rhs b0 + S + H"}, {"condense"}, {solve_name.c_str()}, {"solve (LdlSolve, 1 thr)"},
                    {"solve (cholmod_solve2)"}, {"recover"}, {"history"}};
    double worst = 0;  // the two solves' largest difference, relative to the solution's size
    for (int64_t n = 1; n <= steps; ++n) {
      const double t = double(n) * spec.tstep;
      auto at = Clock::now();
      auto lap = [&](Part& part) {
        const auto now = Clock::now();
        part.seconds += std::chrono::duration<double>(now - at).count();
        at = now;
      };
      sources.at(t, changes.data(), own.threads());
      lap(parts[0]);
      move_offsets(sys, t, voltage_changes);
      step_rhs(sys, changes, voltage_changes, b);
      lap(parts[1]);
      chains.condense(b.data(), rhs.data(), b_kept.data());
      lap(parts[2]);
      own.solve(b_kept.data(), x_kept.data());
      lap(parts[3]);
      for (auto [other, part] : {std::pair{&serial, 4}, std::pair{&cholmod, 5}}) {
        at = Clock::now();
        other->solve(b_kept.data(), x_other.data());
        lap(parts[part]);
        double diff = 0, size = 0;
        for (size_t k = 0; k < x_kept.size(); ++k)
          diff = std::max(diff, std::abs(x_kept[k] - x_other[k])), size = std::max(size, std::abs(x_kept[k]));
        worst = std::max(worst, diff / size);
      }
      at = Clock::now();
      chains.recover(x_kept.data(), rhs.data(), x.data());
      lap(parts[6]);
      advance_history(sys, x, own.threads());
      lap(parts[7]);
    }
    std::printf("%s: %d step unknowns, %zu kept, %zu sources, %zu capacitors and inductors; factorisation %.1f ms\n",
                argv[1], sys.reduced.unknowns(), chains.kept.size(), sys.sources.size(), sys.branches.size(),
                1e3 * factor_seconds);
    double total = 0;
    for (const Part& p : parts) {
      std::printf("  %-24s %8.1f us per step\n", p.name, 1e6 * p.seconds / double(steps));
      if (&p != &parts[4] && &p != &parts[5]) total += p.seconds;
    }
    std::printf("  %-24s %8.1f us per step (with the first solve), %lld steps\n", "step", 1e6 * total / double(steps),
                static_cast<long long>(steps));
    std::printf("  the solves' largest difference: %.2e of the largest value\n", worst);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  return 0;
}
