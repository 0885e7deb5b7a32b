#pragma once
// The transient time loop's engine on the device (tran/stepper.hpp). Plain C++, like
// gpu/gpu_solver.hpp: src/app includes it under PGSIM_HAVE_CUDA only.
//
// Built once: the step matrix in the SpMV layout, the preconditioner (the CMG hierarchy, built for
// the step matrix on the host, uploaded once), the PCG graphs, b0, the step unknowns, the
// capacitors' and inductors' state, and for every unknown the list of source and history terms
// of its right-hand side. Each step then costs one host-to-device copy of the waveform sources'
// values at t (evaluated on the host: the waveforms are the parser's, so the CPU and GPU read one
// definition), a kernel forming b = b0 + S(t) + H_n and the first guess 2 x_n - x_{n-1}, PCG on the
// device, a
// kernel updating the histories, one tracking each unknown's range and gathering the probes,
// and one device-to-host copy of the probed voltages. The whole x stays on the device; the
// unknowns' ranges come back once, at the end.
//
// The step matrix is solved whole: chain elimination (mna/chain_elimination.hpp) condenses each
// step's right-hand side sequentially on the host, which would need the whole vector per step.
#include <memory>
#include <string>
#include <vector>

#include "cmg/hierarchy.hpp"
#include "gpu/gpu_solver.hpp"
#include "tran/stepper.hpp"

namespace pgsim::gpu {

struct GpuStepperReport {
  double setup_seconds = 0;   // the CMG hierarchy's build, on the device or the host (the overload with CmgOptions)
  double upload_seconds = 0;  // matrix, preconditioner, state and PCG graphs to the device (the build left out)
  std::string device, spmv;
};

// system: built and started (start_from_dc); it is read, never changed (the device keeps its own
// state), and must outlive the stepper, as must the netlist its sources' waveforms belong to.
// x0: the step unknowns at t = 0. hierarchy: for settings.precond == "cmg", built for
// system.reduced.G. Every CUDA failure, here or in a later call, is a GpuFailure. A system with
// voltage sources that follow waveforms (system.voltages not empty) is not taken: logic_error.
std::unique_ptr<Stepper> make_gpu_stepper(const StepSystem& system, const std::vector<double>& x0,
                                          const std::vector<Probe>& probes, const CmgHierarchy* hierarchy,
                                          const SolveControl& control, const GpuSolveSettings& settings,
                                          GpuStepperReport* report = nullptr);
// The same with the cmg hierarchy of system.reduced.G built with `cmg`'s options: on the device
// from the step matrix's device copy where it builds it (gpu/cmg_build.hpp;
// builds_hierarchy_on_device(settings, cmg, rows)), bit for bit build_cmg_hierarchy(G, cmg);
// else by build_cmg_hierarchy on the host.
std::unique_ptr<Stepper> make_gpu_stepper(const StepSystem& system, const std::vector<double>& x0,
                                          const std::vector<Probe>& probes, const CmgOptions& cmg,
                                          const SolveControl& control, const GpuSolveSettings& settings,
                                          GpuStepperReport* report = nullptr);

}  // namespace pgsim::gpu
