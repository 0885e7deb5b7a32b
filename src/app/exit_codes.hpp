#pragma once
// pgsim's exit codes; stable, listed in README.md.
namespace pgsim {

constexpr int kExitOk = 0;
constexpr int kExitInput = 2;         // bad netlist, file or option: InputError, CLI11 errors
constexpr int kExitNotConverged = 3;  // the solver did not reach the tolerance: SolveError
constexpr int kExitSystem = 4;        // I/O, memory or GPU failure: SystemError, std::bad_alloc,
                                      // gpu::GpuError (and any other exception reaching main)

}  // namespace pgsim
