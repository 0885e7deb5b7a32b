#pragma once
// Order statistics of a large array on all threads, without reordering or copying it (issue 13:
// the IR-drop report's percentiles of tens of millions of values were serial nth_element calls on
// copies, most of the write phase's summary at 50M nodes).
//
// How: each double maps to an unsigned key of the same order. One parallel pass counts the keys'
// top 16 bits and finds, for each wanted rank, its bucket and its rank inside; a second pass
// counts the next 12 bits of the keys in those buckets only; the values whose top 28 bits match
// are then few (a 2^-16 slice of an octave) and are gathered and selected exactly.
//
// The array may be cut into segments (the IR-drop report's values: each kind's layers side by
// side). Each pass counts every segment apart, so the ranks among any run of consecutive segments
// (one layer, or all layers of a kind) come out of the same three passes over the array: a run's
// counts are its segments' counts summed.
#include <cstddef>
#include <vector>

namespace pgsim {

// Ranks wanted among the values of segments [first, end).
struct RankQuery {
  size_t first = 0, end = 0;
  std::vector<size_t> ranks;  // each < the number of values in those segments, in any order
};

// Segment s is values[bounds[s], bounds[s + 1]) (bounds non-decreasing, bounds[0] = 0, at least
// two entries). For each query, the value that would stand at each of its ranks if its segments'
// values were sorted ascending: what std::nth_element gives, exactly. -0.0 ranks as 0.0, and a
// zero selected is returned as 0.0. The values of the queried segments must not be NaN
// (std::invalid_argument), nor number 2^32 or more per thread (std::length_error); segments no
// query covers are not read.
std::vector<std::vector<double>> select_ranks(const double* values, const std::vector<size_t>& bounds,
                                              const std::vector<RankQuery>& queries);

// The same for one segment, values[0, n).
std::vector<double> select_ranks(const double* values, size_t n, const std::vector<size_t>& ranks);

}  // namespace pgsim
