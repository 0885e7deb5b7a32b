#pragma once
// Where the PCG runs: --backend gpu|cpu|auto. Plain C++: the GPU side is reached through
// gpu/gpu_solver.hpp only when the build has CUDA (PGSIM_HAVE_CUDA).
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "app/options.hpp"
#include "app/run.hpp"
#include "cmg/builder.hpp"
#include "mna/csr.hpp"
#include "pcg/solve_result.hpp"
#include "tran/stepper.hpp"

namespace pgsim {

// --backend auto solves on the GPU from this many unknowns after chain elimination when the CUDA
// context was created ahead, beside the parse; below it the CPU finishes the whole run first (the
// crossover measured in README, "Choosing the back end": the CPU first at 1M nodes, 396k such
// unknowns, the GPU from 1.5M nodes, about 594k).
constexpr int64_t kAutoGpuMinUnknowns = 500000;
// ... and from twice as many when it was not (a small file that includes a large grid): the
// context's 0.25-0.35 s then adds to the GPU's side, which the CPU's solve (0.54-0.75 us per unknown
// on the measured machine) outgrows only around 1M unknowns.
constexpr int64_t kAutoGpuMinUnknownsCold = 2 * kAutoGpuMinUnknowns;
// auto creates the context ahead for netlist files of at least this size: about
// kAutoGpuMinUnknowns unknowns after chain elimination (ibmpg1 has 156 bytes per such unknown,
// pgsim-gen grids 161). The context costs more than a whole small run, slows the parse beside it,
// and the run waits for it at exit, so a file that will solve on the CPU should not start it.
constexpr uint64_t kAutoWarmUpMinBytes = uint64_t(kAutoGpuMinUnknowns) * 150;

// Whether the run may solve on the GPU, decided before parsing: a CUDA build, --solver pcg,
// not --export-only, and --backend gpu, or auto with a netlist file of at least
// kAutoWarmUpMinBytes, or one whose text size cannot be known ahead (standard input, a pipe,
// gzip data, a path that does not exist), or without --dc a transient file of at least
// kAutoWarmUpMinTransientBytes.
bool gpu_likely(const Options& opt);

// auto reads a netlist on the GPU (gpu/gpu_parse.hpp) from this size of plain text, when the run
// may solve there (gpu_likely: the context is being made anyway). The GPU reader first waits for
// the context (ibmpg1 read on the GPU: 0.273 s), beside which the CPU parse runs: on the H100
// machine the CPU read a 1.5M-node grid (104 MB) in 0.174 s against the GPU's 0.350 s, 3M
// (213 MB) in 0.365 against 0.400 s, 5M (360 MB) in 0.516 against 0.435 s
// (benchmarks/ibmpg/README.md, "the GPU reader").
constexpr uint64_t kAutoGpuParseMinBytes = uint64_t(256) << 20;

// Whether --parse `parse` asks the GPU reader for `bytes` of text (a whole file, or under mpirun
// a rank's range; unknown: nullopt): gpu always, auto for kAutoGpuParseMinBytes or more where the
// run's context is made ahead (`context_ahead`), cpu never.
bool gpu_parse_wanted(const std::string& parse, bool context_ahead, std::optional<uint64_t> bytes);

// The netlist at opt.netlist, read on the GPU where opt.parse asks it (gpu; or auto with
// `context_ahead` and a plain file of at least kAutoGpuParseMinBytes) and the GPU reader takes the
// text, else by parse_netlist(), which also reads what the GPU reader declines (with an info line
// saying why) or fails on (a warning). Never a different netlist: only a faster read of it.
// --compare parses on the CPU (it looks names up in the index the GPU reader does not build).
// `text_bytes`: netlist_text_bytes(opt.netlist), which the caller has. `on_gpu`: whether the GPU read it.
Netlist read_netlist(const Options& opt, const ParseOptions& parse_options, std::optional<uint64_t> text_bytes,
                     bool context_ahead, bool& on_gpu);

// While alive, a thread creates the CUDA context of `device` and pays the first solve's other
// one-time costs (gpu/warm_up.hpp) when `start` (gpu_likely; under mpirun, --backend gpu), so that
// they overlap parsing and reduction; a rank of an MPI job (`rank`) also the node ids'. The
// destructor waits for it.
class GpuContextWarmUp {
 public:
  explicit GpuContextWarmUp(bool start, int device = 0, bool rank = false);
  ~GpuContextWarmUp();
  GpuContextWarmUp(const GpuContextWarmUp&) = delete;
  GpuContextWarmUp& operator=(const GpuContextWarmUp&) = delete;
  // The cores the warm-up keeps busy now: 1 while its thread works, else 0 (for
  // ThreadCountScope::limit_to).
  int busy_cores() const { return thread_.joinable() && !done_.load(std::memory_order_relaxed) ? 1 : 0; }
  // The device whose context it creates; -1 when it was not started (or the build has no CUDA).
  int device() const { return thread_.joinable() ? device_ : -1; }

 private:
  int device_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

struct BackendChoice {
  std::string backend;  // "gpu" or "cpu"
  std::string reason;   // why, for the log and the JSON
  std::string solver;   // "pcg", or for a transient (choose_transient_backend) "direct"
};

// requested: gpu, cpu or auto (else InputError); unknowns: the PCG system's rows after chain
// elimination; context_ahead: the warm-up was started (gpu_likely). auto: the CPU below
// kAutoGpuMinUnknowns (kAutoGpuMinUnknownsCold without the context ahead), with no CUDA call then;
// else the GPU when one is usable, else the CPU. gpu with no usable GPU: SystemError.
BackendChoice choose_backend(const std::string& requested, int64_t unknowns, bool context_ahead);

// --backend auto runs a transient (PCG) on the GPU from kAutoGpuMinTransientUnknowns step unknowns
// and kAutoGpuMinTransientWork unknowns times steps. Measured on the H100 machine (16 cores), ibmpg1t
// (25,372 step unknowns, 1000 steps, README "Transient analysis"): the CPU's warm-started CMG-PCG
// step costs 0.82 us per unknown (20.9 ms), the GPU's about 1 ms (0.61 ms since its first guess
// is extrapolated), a floor set by kernel latency at this size, after a context of about 0.3 s. So the GPU's step is the faster from about 1,200
// unknowns (4,000: with a margin), and its context pays off once the CPU's loop would take a
// second (1e6 unknown-steps at 0.82 us).
constexpr int64_t kAutoGpuMinTransientUnknowns = 4000;
constexpr double kAutoGpuMinTransientWork = 1e6;
// ... but with neither --solver nor --precond given, auto solves a transient with the factorisation
// on the CPU (--solver direct) when its step system has at most kAutoDirectMaxTransientUnknowns
// unknowns and its Cholesky factor at most kAutoDirectMaxFactorEntriesBesideGpu entries
// (pcg/direct.hpp's factor_entries, a symbolic analysis of milliseconds, done only under the
// first bound), whatever the GPU; and up to kAutoDirectMaxFactorEntries entries when the GPU does
// not run it (no usable GPU, or below the GPU thresholds above), where the CPU's PCG step (0.82 us
// per unknown) is the alternative. A direct step reads the factor twice, in time proportional to
// its entries (split among threads: pcg/ldl_solve.hpp), and its sources, right-hand side, chains
// and histories, in time proportional to the unknowns. Measured on the H100 machine (16 cores,
// benchmarks/tran/README.md, 1000 steps), ibmpg1t, 25,372 step unknowns, 187,842 factor entries
// (164,688 after chain elimination): a direct step of 0.51-0.52 ms, 0.26 ms of it the solve on
// 10 threads (0.60 ms on one), 0.75-0.76 s end to end; the GPU's step 0.61-0.65 ms (11
// iterations: kernel latency at this size), 1.13-1.26 s end to end, its part outside the loop
// about 0.4 s more than the factorisation's (the context beside the parse, the upload, the
// driver's teardown at exit). So the GPU's 1000 steps cost what direct steps of about 1 ms do:
// some 1.7 times ibmpg1t's unknowns and entries on 16 cores, and ibmpg1t's on one core (0.89 ms
// a step). The bound beside the GPU, 250k entries, leaves the factorisation where it surely wins;
// without the GPU the alternative is CPU PCG at 0.82 us per unknown and step (20.9 ms on
// ibmpg1t), which a factorisation of 500k entries (a few ms a step) still beats by far.
// pgsim-gen --nodes 100k, 70,002 unknowns, 1.6M entries: 19.3 ms per direct step (CHOLMOD's
// serial solve, no chain elimination) against 1.04 ms on the GPU.
constexpr int64_t kAutoDirectMaxTransientUnknowns = 50000;
constexpr int64_t kAutoDirectMaxFactorEntriesBesideGpu = 250000;
constexpr int64_t kAutoDirectMaxFactorEntries = 500000;

// auto creates the GPU context ahead (gpu_likely) for a transient netlist file (a .tran line in
// its last 64 KiB) of at least this size, from which the GPU, rather than the factorisation, is
// likely to run the loop: a context the run does not use still costs the process the driver's
// teardown at exit (0.13-0.17 s on the H100 machine), one it uses but did not start ahead costs
// its creation (about 0.28 s) after the parse rather than beside it. ibmpg1t (4.4 MB, 25,372
// step unknowns, 187,842 factor entries, 7.4 per unknown, 174 bytes per unknown) runs direct;
// kAutoDirectMaxFactorEntriesBesideGpu entries at ibmpg1t's density are some 34k unknowns, 6 MB.
constexpr uint64_t kAutoWarmUpMinTransientBytes = 6000000;

// The engine of a transient's time loop (unknowns: the step system's; factor_entries: of the step
// matrix, asked only when needed). --backend cpu: the CPU with opt.solver. --solver direct: the
// CPU (with --backend gpu a warning says the factorisation runs on the CPU). --backend gpu: the
// GPU (SystemError without a usable one). auto: without --solver/--precond and within
// kAutoDirectMaxFactorEntriesBesideGpu, direct on the CPU; else the GPU when one is usable and the
// run reaches both GPU thresholds above (no CUDA call below them); else on the CPU, direct within
// kAutoDirectMaxFactorEntries (without --solver/--precond), PCG beyond. moving_pads (voltage
// sources with a waveform, which only the CPU engine takes): never the GPU, and with --backend gpu
// a warning says the time loop runs on the CPU.
BackendChoice choose_transient_backend(const Options& opt, bool moving_pads, int64_t unknowns, int64_t steps,
                                       const std::function<std::optional<int64_t>()>& factor_entries);

// The GPU stepper (gpu/gpu_stepper.hpp) for a started step system, with report.precond (cmg: the
// hierarchy of the step matrix built on the device, or where it cannot be, on the CPU first):
// fills time.setup, time.upload and device. A device failure is a SystemError under --backend
// gpu; under auto a warning and nullptr (the caller runs on the CPU).
std::unique_ptr<Stepper> make_gpu_stepper(const StepSystem& system, const std::vector<double>& x0,
                                          const std::vector<Probe>& probes, const SolveControl& control,
                                          const Options& opt, RunReport& report);

// Runs `loop`, the time loop over a GPU stepper. A device failure inside it is a SystemError under
// --backend gpu; under auto a warning and false (the caller runs the loop again on the CPU).
bool run_gpu_loop(const Options& opt, const std::function<void()>& loop);

// The CMG options the command line asks for (--smoother); InputError for a bad name.
CmgOptions cmg_options(const Options& opt);

// PCG on the GPU with report.precond (cmg: the hierarchy is built once G is on the device, there
// where gpu_builds_hierarchy, time.setup): fills report.result, time.setup, time.upload,
// time.solve, levels, peak_device_bytes and device. x: the solution, G.rows entries; the first
// iterate is zeros, x sized only once the hierarchy is built (not held through a build on the
// host, where the host's memory peaks). A device failure (out of
// memory, a failed call) is a SystemError naming the call when the user demanded --backend gpu;
// under auto it is a warning, and false says "solve on the CPU" (x then as yet unspecified).
bool solve_pcg_on_gpu(const CsrMatrix& G, const std::vector<double>& b, std::vector<double>& x,
                      const SolveControl& control, const Options& opt, RunReport& report);

// Whether solve_pcg_on_gpu builds no hierarchy on the host for a G of `rows` rows: none at all, or
// CMG's built wholly on the device (gpu::builds_hierarchy_on_device). False without CUDA.
bool gpu_builds_hierarchy(const Options& opt, const RunReport& report, int32_t rows);


}  // namespace pgsim
