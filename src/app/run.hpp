#pragma once
// The whole pipeline for one netlist: parse, reduce, set up, solve, write, compare.
#include <optional>
#include <string>
#include <vector>

#include "app/compare.hpp"
#include "app/ir_drop.hpp"
#include "app/options.hpp"
#include "app/waveform_file.hpp"
#include "dist/rank_stats.hpp"
#include "mna/packed_symmetric.hpp"
#include "mna/reduce.hpp"
#include "parser/netlist.hpp"
#include "pcg/preconditioner.hpp"
#include "pcg/solve_result.hpp"

namespace pgsim {

struct PhaseTimes {
  double parse = 0, reduce = 0, eliminate = 0, setup = 0, upload = 0, solve = 0, write = 0, total = 0;
  double recover = 0;  // eliminated unknowns back from the solve's, and the whole system's residual
};

// A transient run (tran/step_system.hpp): what --json reports under "transient".
struct TransientReport {
  std::string method;  // tr | be
  double tstep = 0, tstop = 0;
  int64_t steps = 0;
  int64_t printed_nodes = 0;
  int64_t total_iterations = 0;  // PCG iterations over all steps (0 with the direct solver)
  int max_iterations = 0;        // of one step
  double seconds = 0;            // the time loop
  std::optional<WaveformComparison> comparison;
  double mean_iterations() const { return steps ? double(total_iterations) / double(steps) : 0.0; }
  double seconds_per_step() const { return steps ? seconds / double(steps) : 0.0; }
};

struct RunReport {
  std::string netlist;
  uint64_t bytes = 0;
  int64_t nodes = 0;      // netlist nodes, ground excluded
  int64_t unknowns = 0;
  int64_t nnz = 0;
  int64_t eliminated = 0;  // unknowns removed by chain elimination before PCG
  int parse_threads = 0;   // OpenMP threads of the parse (app/thread_budget.hpp)
  bool parse_on_gpu = false;  // the netlist was read on the GPU (app/backend.hpp read_netlist)
  int threads = 0;         // OpenMP threads of every phase after it
  std::string method, precond, backend;
  std::string backend_reason;    // why the solve ran on `backend` (--backend auto's rule, or the request)
  std::string smoother;          // the CMG smoother (--smoother); empty for other preconditioners
  std::string device;            // the GPU and its SpMV layout, when the GPU solved
  uint64_t peak_device_bytes = 0;
  uint64_t peak_host_bytes = 0;  // resident host memory at its peak (0 where unknown)
  SolveResult result;
  PhaseTimes time;
  std::vector<LevelStats> levels;
  std::optional<Comparison> comparison;
  std::optional<IrDropReport> ir_drop;  // transient: the worst dynamic drop over the run
  std::optional<TransientReport> transient;
  int ranks = 1;                          // MPI ranks that solved (mpirun -np P)
  std::vector<dist::RankStats> per_rank;  // one per rank: its share of the PCG system
};

// Frees the netlist's elements and element names (what reduce() and supply_nets() read), keeping
// the node names that output and reports need.
void release_elements(Netlist& netlist);

// The largest data of a DC run, alive until its end: the netlist (node names, readable by id:
// their index is dropped after the parse), the reduced system (with chain elimination its G
// packed into packed_G, mna/packed_symmetric.hpp, and system.G left empty, unless G could not be
// packed, and system.node_of_unknown always freed, after the --export-system files if asked for), the solution and every
// node's voltage and deviation. run() keeps them in the caller's RunData when given one (main.cpp: a
// process about to exit leaves them to the kernel), else in its own, freed when it returns.
struct RunData {
  Netlist netlist;
  ReducedSystem system;
  std::optional<PackedSymmetric> packed_G;
  std::vector<double> x, voltages;
  NodeDeviations deviations;
};

// Runs the pipeline in one process; throws InputError, SolveError or SystemError (see main.cpp for
// exit codes). An MPI job of several ranks runs app/distributed_run.hpp instead.
RunReport run(const Options& options, RunData* data = nullptr);

}  // namespace pgsim
