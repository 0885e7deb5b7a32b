#pragma once
// The DC current of every inductor, from a DC solution (tran/step_system.hpp's initial state).
//
// At DC an inductor is a short, so its current is whatever Kirchhoff's current law leaves for
// it: the current each node sends through resistors and current sources must leave through the
// node's shorts (voltage sources, 0-ohm resistors, inductors). The shorts are resolved leaf
// first: a node with one unresolved short fixes that short's current. Shorts left in a loop
// carry a current DC does not determine; an inductor among them is an InputError.
#include <vector>

#include "parser/netlist.hpp"

namespace pgsim {

// Per element (index into netlist.elements): the inductor's current from plus to minus in
// amperes; 0 for every other element. voltages: every netlist node's DC voltage.
std::vector<double> inductor_dc_currents(const Netlist& netlist, const std::vector<double>& voltages);

}  // namespace pgsim
