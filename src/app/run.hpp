#pragma once
// The whole pipeline for one netlist: parse, reduce, set up, solve, write, compare.
#include <optional>
#include <string>
#include <vector>

#include "app/compare.hpp"
#include "app/ir_drop.hpp"
#include "app/options.hpp"
#include "pcg/preconditioner.hpp"
#include "pcg/solve_result.hpp"

namespace pgsim {

struct PhaseTimes {
  double parse = 0, reduce = 0, eliminate = 0, setup = 0, upload = 0, solve = 0, write = 0, total = 0;
  double recover = 0;  // eliminated unknowns back from the solve's, and the whole system's residual
};

struct RunReport {
  std::string netlist;
  uint64_t bytes = 0;
  int64_t nodes = 0;      // netlist nodes, ground excluded
  int64_t unknowns = 0;
  int64_t nnz = 0;
  int64_t eliminated = 0;  // unknowns removed by chain elimination before PCG
  int threads = 0;         // OpenMP threads the run used
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
  std::optional<IrDropReport> ir_drop;
};

// Runs the pipeline; throws InputError, SolveError or SystemError (see main.cpp for exit codes).
RunReport run(const Options& options);

}  // namespace pgsim
