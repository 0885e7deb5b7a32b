#pragma once
// The pipeline's transient branch (entered from run() for a netlist with .tran): the DC
// operating point, the step system, the time loop (src/tran), then the .print waveforms (-o),
// --compare against reference waveforms, and the worst dynamic drop per node (IR-drop report,
// --heatmap).
#include "app/options.hpp"
#include "app/run.hpp"
#include "mna/stopwatch.hpp"
#include "parser/netlist.hpp"

namespace pgsim {

// Fills rep (method, result of the DC solve, transient, ir_drop, time); `phase` has timed the
// parse already. thread_cap: the threads the run may use at most (app/thread_budget.hpp): the
// factorisation's solves, a thousand per run, take up to that many rather than the count the
// node count gives the other phases. Throws InputError, SolveError or SystemError as run() does.
void run_transient(const Options& opt, Netlist& netlist, RunReport& rep, Stopwatch& phase, int thread_cap);

}  // namespace pgsim
