#pragma once
// Exact elimination of degree-0, -1 and -2 unknowns (dangling wires and wire chains) from an SDD
// system before the iterative solve (DESIGN.md section 3). The result is the Schur complement on
// the kept unknowns, again an SDD M-matrix, with its right-hand side; the eliminated unknowns are
// recovered from the kept ones after the solve.
#include <cstdint>
#include <vector>

#include "mna/csr.hpp"
#include "parser/default_init.hpp"

namespace pgsim {

struct EliminatedSystem {
  // One eliminated unknown v: d x_v - w_a x_a - w_b x_b = rhs at the time of its elimination
  // (a, b: its remaining neighbours, -1 where absent). No member initialisers: steps' storage is
  // sized without being written, then filled by all threads. Packed: 44 B, not 48 with the
  // padding that would align the doubles (the steps are held from the elimination to the
  // recovery, through the CMG build and the solve, where the host's memory peaks).
  struct __attribute__((packed)) Step {
    int32_t v, a, b;
    double w_a, w_b, diag, rhs;
  };
  static_assert(sizeof(Step) == 44, "Step: packed");
  CsrMatrix G;                 // over the kept unknowns, in their original order
  std::vector<double> b;
  std::vector<int32_t> kept;   // kept unknown k is original unknown kept[k]
  FillVector<Step> steps;      // group after group (below), each in its elimination order
  int32_t original_unknowns = 0;
  // The steps' schedule, fixed by G alone (never by the thread count). The unknowns are cut into
  // index ranges; level 0 eliminates, in each range on its own, the unknowns whose neighbours all
  // lie in the range; each further level merges the ranges pairwise and does the same for the
  // unknowns left, the last level being one range. Group g (one range at one level) is steps
  // [group_ptr[g], group_ptr[g + 1]); level l is groups [level_ptr[l], level_ptr[l + 1]). A step
  // touches only unknowns of its group's range, each either kept or eliminated later in the same
  // group or at a later level: the groups of one level can be replayed in parallel.
  std::vector<int64_t> group_ptr{0};
  std::vector<int32_t> level_ptr{0};

  int32_t eliminated() const { return static_cast<int32_t>(steps.size()); }
  // Every original unknown's value from the solution of the kept system.
  std::vector<double> recover(const std::vector<double>& x_kept) const;
  // The same into x (resized to original_unknowns): a vector the caller has already touched
  // takes the values without page faults (tens of ms at millions of unknowns).
  void recover(const std::vector<double>& x_kept, std::vector<double>& x) const;

  // For another right-hand side b_full of the same G (a transient step): rhs[v] for every original
  // unknown as the elimination would have seen it (eliminated v: its Step::rhs), and b_kept, the
  // kept system's right-hand side. rhs is overwritten; both must have their full sizes.
  void condense(const double* b_full, double* rhs, double* b_kept) const;
  // recover() for that right-hand side: x (original unknowns) from x_kept and condense()'s rhs.
  void recover(const double* x_kept, const double* rhs, double* x) const;
};

// G: symmetric, non-positive off-diagonals, diagonally dominant (the output of reduce()).
// Eliminates, repeatedly, every unknown with at most two neighbours; a degree-2 unknown is kept
// when a neighbour's row is long (a hub), which bounds the work per elimination. The ranges of
// one level are eliminated in parallel; which unknowns go, the steps, G and b are the same bit for
// bit for any thread count.
// pinned (optional, G.rows entries): rows with pinned[v] != 0 are never eliminated (they stay in
// the kept system, their entries and right-hand side updated by eliminated neighbours). The
// distributed reduction pins every row coupled to another rank, so each eliminated unknown
// couples only to its rank's rows and is recovered there.
EliminatedSystem eliminate_chains(const CsrMatrix& G, const std::vector<double>& b,
                                  const std::vector<uint8_t>* pinned = nullptr);

// The same elimination with G's own arrays as its work space instead of a copy of them (12 B per
// entry: 35 B per netlist node on a 50M-node grid, at the elimination's peak of host memory, in
// one process as on a rank): G is left empty, the result the same bits.
EliminatedSystem eliminate_chains(CsrMatrix&& G, const std::vector<double>& b,
                                  const std::vector<uint8_t>* pinned = nullptr);

}  // namespace pgsim
