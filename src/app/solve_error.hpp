#pragma once
#include <stdexcept>

namespace pgsim {

// The solver did not reach the requested tolerance: the answer would be wrong.
class SolveError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace pgsim
