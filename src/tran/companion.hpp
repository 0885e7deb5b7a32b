#pragma once
// The companion-model arithmetic of tran/step_system.hpp as plain functions of scalars, so the
// CPU step system and the GPU stepper (gpu/gpu_stepper.cu) compute the same thing from one source.
#include <cstdint>

#include "parser/host_device.hpp"

namespace pgsim {

// v = x[plus] - x[minus] + offset; an end with unknown -1 reads 0.
PGSIM_HOST_DEVICE inline double branch_voltage(int32_t plus, int32_t minus, double offset, const double* x) {
  return (plus >= 0 ? x[plus] : 0.0) - (minus >= 0 ? x[minus] : 0.0) + offset;
}

// hist_n from i_n and v_n (the table in step_system.hpp).
PGSIM_HOST_DEVICE inline double companion_history(bool inductor, bool trapezoidal, double g, double v, double i) {
  if (inductor) return trapezoidal ? i + g * v : i;
  return trapezoidal ? -(g * v + i) : -g * v;
}

}  // namespace pgsim
