#pragma once
// Order statistics of a large array on all threads, without reordering or copying it (issue 13:
// the IR-drop report's percentiles of tens of millions of values were serial nth_element calls on
// copies, most of the write phase's summary at 50M nodes).
//
// How: each double maps to an unsigned key of the same order. One parallel pass counts the keys'
// top 16 bits and finds, for each wanted rank, its bucket and its rank inside; a second pass
// counts the next 16 bits of the keys in those buckets only; the values whose top 32 bits match
// are then few (a 2^-20 relative slice of a value range) and are gathered and selected exactly.
#include <cstddef>
#include <vector>

namespace pgsim {

// For each r in `ranks` (each < n, in any order), the value that would stand at index r if
// values[0, n) were sorted ascending: what std::nth_element gives, exactly. -0.0 ranks as 0.0,
// and a zero selected is returned as 0.0. The values must not be NaN (std::invalid_argument).
std::vector<double> select_ranks(const double* values, size_t n, const std::vector<size_t>& ranks);

}  // namespace pgsim
