#pragma once
// One element end's share of one row of G x = b in the distributed stamp (dist/owned_rows.hpp):
// the record the ranks exchange, on the host and (gpu/device_stamp.hpp) on a rank's GPU alike.
#include <cstdint>

namespace pgsim::dist {

struct Contribution {
  int32_t row;        // global unknown
  int32_t neighbour;  // >= 0: a conductance to that unknown; kFixed: to a fixed node; kCurrent: a current source
  double g;           // the conductance (0 for a current source)
  double delta;       // added to the row's b
};
constexpr int32_t kFixed = -1, kCurrent = -2;

// The error where one rank's rows take more records than this build's 32-bit indices hold (both
// stamps' text).
constexpr const char* kTooManyElementEnds = "a rank's rows have more than 2^31 element ends, beyond this build's index width";

}  // namespace pgsim::dist
