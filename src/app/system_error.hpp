#pragma once
#include <stdexcept>

namespace pgsim {

// A failure of the machine rather than of the input: I/O, memory, the GPU.
class SystemError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace pgsim
