#pragma once
// pgsim's exit codes; stable, listed in README.md.
namespace pgsim {

constexpr int kExitOk = 0;
constexpr int kExitInput = 2;         // bad netlist, file or option
constexpr int kExitNotConverged = 3;  // the solver did not reach the tolerance
constexpr int kExitSystem = 4;        // I/O, memory or GPU failure

}  // namespace pgsim
