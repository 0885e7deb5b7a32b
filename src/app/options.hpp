#pragma once
#include <string>

namespace pgsim {

// Everything the command line can ask for.
struct Options {
  std::string netlist;
  std::string output;        // voltages file; empty: do not write
  std::string compare;       // reference voltages; empty: no comparison
  std::string json;          // machine-readable summary; empty: none
  std::string heatmap;       // folder for per-layer IR-drop heat maps; empty: none
  std::string solver = "pcg";  // pcg | direct
  bool solver_given = false;   // --solver or --precond on the command line (else a transient's auto may pick direct)
  std::string precond;       // empty: the default preconditioner
  std::string backend = "auto";  // gpu | cpu | auto
  std::string parse = "auto";    // where the netlist is read: gpu | cpu | auto (app/backend.hpp read_netlist)
  std::string trsv;          // GPU triangular solves of ic0 (see gpu/sptrsv.hpp); empty: the default
  std::string spmv;          // GPU SpMV layout of G (seg | csr | cusparse); empty: the default
  std::string smoother = "jacobi";  // CMG smoother: jacobi | sgs (cmg/builder.hpp)
  int coarse_layers = 0;     // under mpirun, CMG's global coarse correction (dist/coarse_space.hpp); -1: none
  double tolerance = 1e-10;
  int max_iterations = 5000;
  std::string export_prefix;  // --export-system: write the reduced system; empty: do not
  bool export_only = false;   // stop after the export
  bool eliminate = true;     // exact elimination of wire chains before PCG (mna/chain_elimination.hpp)
  int threads = 0;            // --threads: the most OpenMP threads any phase uses (app/thread_budget.hpp); 0: OpenMP's default (all cores)
  // Transient analysis (netlists with .tran; tran/step_system.hpp)
  std::string method = "tr";  // tr (trapezoidal) | be (backward Euler)
  double tstep = 0;           // 0: the .tran line's TSTEP
  bool dc_only = false;       // --dc: the DC operating point only, even with .tran
  bool profile = false;
  bool quiet = false;
};

}  // namespace pgsim
