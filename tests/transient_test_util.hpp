#pragma once
// A small transient grid and a started step system for the CPU and GPU transient tests.
#include <string>
#include <vector>

#include "mna/reduce.hpp"
#include "parser/netlist.hpp"
#include "pcg/direct.hpp"
#include "tran/step_system.hpp"

namespace pgsim::test {

// An n x n mesh of 0.1 Ohm (nodes n_I_J), four corner pads at 1.8 V behind 1 nH, and at every 7th
// node a 10 pF decap and a PULSE load (1 mA to 20 mA, delays staggered over 0-40 ps); .tran 10p 2n.
inline std::string transient_mesh(int n) {
  std::string text;
  auto node = [](int i, int j) { return "n_" + std::to_string(i) + "_" + std::to_string(j); };
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      if (i + 1 < n) text += "R" + node(i, j) + "x " + node(i, j) + " " + node(i + 1, j) + " 0.1\n";
      if (j + 1 < n) text += "R" + node(i, j) + "y " + node(i, j) + " " + node(i, j + 1) + " 0.1\n";
      if ((i * n + j) % 7 == 0) {
        text += "I" + node(i, j) + " " + node(i, j) + " 0 1m PULSE(1m 20m " + std::to_string((i + j) % 5 * 10) +
                "p 50p 50p 10p 1n)\n";
        text += "C" + node(i, j) + " " + node(i, j) + " 0 10p\n";
      }
    }
  for (int p = 0; p < 4; ++p) {
    const std::string pad = node(p % 2 * (n - 1), p / 2 * (n - 1)), y = "pad" + std::to_string(p);
    text += "V" + y + " " + y + " 0 1.8\nL" + y + " " + y + " " + pad + " 1n\n";
  }
  return text + ".tran 10p 2n\n";
}

// The step system of nl (sources prepared against its .tran line) for step h, started from the DC
// operating point (direct solve); x0 gets the step unknowns at t = 0.
inline StepSystem started_step_system(Netlist& nl, Integration method, double h, std::vector<double>& x0) {
  const TranSpec spec = *nl.transient.tran;
  prepare_sources(nl, spec.tstep, spec.tstop);
  const ReducedSystem dc = reduce(nl);
  std::vector<double> x_dc;
  solve_direct(dc.G, dc.b, x_dc);
  StepSystem step = build_step_system(nl, method, h);
  start_from_dc(step, nl, node_voltages(dc, x_dc), x0);
  return step;
}

}  // namespace pgsim::test
