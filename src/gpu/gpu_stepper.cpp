#include "gpu/gpu_stepper.hpp"

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include "cmg/builder.hpp"
#include "gpu/cmg_build.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/device_info.hpp"
#include "gpu/gpu_failure.hpp"
#include "gpu/make_preconditioner.hpp"
#include "gpu/pcg_gpu.hpp"
#include "gpu/spmv.hpp"
#include "gpu/transient_kernels.hpp"
#include "tran/source_changes.hpp"

namespace pgsim::gpu {
namespace {

// Pinned host memory for the per-step copies (a pageable copy would be staged by the driver).
class PinnedBuffer {
 public:
  explicit PinnedBuffer(size_t n) : n_(n) {
    if (n) PGSIM_CUDA(cudaMallocHost(reinterpret_cast<void**>(&p_), n * sizeof(double)));
  }
  ~PinnedBuffer() {
    if (p_) cudaFreeHost(p_);
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  double* data() { return p_; }
  size_t size() const { return n_; }

 private:
  double* p_ = nullptr;
  size_t n_ = 0;
};

// S(t) (SourceChanges) in pinned memory, the next step's evaluated on a thread of its own while
// the device solves the current one: evaluated in line, ibmpg1t's 10,774 PULSE sources would
// leave the device idle while the host goes through them (about 60 us per step on one thread of
// the H100 machine even with the schedule SourceChanges keeps).
class SourceValues {
 public:
  explicit SourceValues(const StepSystem& sys)
      : changes_(sys), buffers_{PinnedBuffer(sys.sources.size()), PinnedBuffer(sys.sources.size())} {
    if (!sys.sources.empty()) worker_ = std::thread([this] { serve(); });
  }
  ~SourceValues() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      quit_ = true;
    }
    changed_.notify_all();
    if (worker_.joinable()) worker_.join();
  }
  SourceValues(const SourceValues&) = delete;
  SourceValues& operator=(const SourceValues&) = delete;

  // S(t): what ahead(t) evaluated, else evaluated now. Valid until the second ahead() after this.
  const double* at(double t) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return !busy_; });
    double* values = buffers_[slot_].data();
    if (!(ready_ && time_ == t)) changes_.at(t, values);
    ready_ = false;
    return values;
  }

  // Starts evaluating S(t) on the worker, into the buffer at() did not return last.
  void ahead(double t) {
    if (!worker_.joinable()) return;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return !busy_; });
      slot_ ^= 1;
      time_ = t;
      busy_ = ready_ = true;
    }
    changed_.notify_all();
  }

 private:
  void serve() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      changed_.wait(lock, [&] { return busy_ || quit_; });
      if (quit_) return;
      double* values = buffers_[slot_].data();
      const double t = time_;
      lock.unlock();
      changes_.at(t, values);
      lock.lock();
      busy_ = false;
      changed_.notify_all();
    }
  }

  SourceChanges changes_;  // used by one thread at a time: the worker while busy_, else at()
  PinnedBuffer buffers_[2];
  std::thread worker_;
  std::mutex mutex_;
  std::condition_variable changed_;
  int slot_ = 0;       // the buffer at() returns; ahead() fills the other
  double time_ = 0;    // of the values ahead() asked for
  bool busy_ = false;  // the worker is evaluating them
  bool ready_ = false;  // ... or has
  bool quit_ = false;
};

// Per unknown, its right-hand side's terms in step_rhs's order (sources, then branches), each
// 2 k + (1 at the minus end): k indexes the values array [S(t) per source | hist per branch].
struct RhsTerms {
  std::vector<int32_t> ptr, terms;
};

RhsTerms rhs_terms(const StepSystem& sys) {
  const auto n = size_t(sys.reduced.unknowns());
  RhsTerms t;
  t.ptr.assign(n + 1, 0);
  auto each_end = [&](auto&& visit) {
    int32_t k = 0;
    for (const TimedSource& s : sys.sources) visit(s.plus, s.minus, k++);
    for (const ReactiveBranch& br : sys.branches) visit(br.plus, br.minus, k++);
  };
  each_end([&](int32_t plus, int32_t minus, int32_t) {
    if (plus >= 0) ++t.ptr[size_t(plus) + 1];
    if (minus >= 0) ++t.ptr[size_t(minus) + 1];
  });
  for (size_t i = 0; i < n; ++i) t.ptr[i + 1] += t.ptr[i];
  t.terms.resize(size_t(t.ptr[n]));
  std::vector<int32_t> fill(t.ptr.begin(), t.ptr.end() - 1);
  each_end([&](int32_t plus, int32_t minus, int32_t k) {
    if (plus >= 0) t.terms[size_t(fill[size_t(plus)]++)] = 2 * k;
    if (minus >= 0) t.terms[size_t(fill[size_t(minus)]++)] = 2 * k + 1;
  });
  return t;
}

class GpuStepper : public Stepper {
 public:
  GpuStepper(const StepSystem& sys, const std::vector<double>& x0, const std::vector<Probe>& probes,
             const CmgHierarchy* h, const CmgOptions* cmg, const SolveControl& control, const GpuSolveSettings& s,
             GpuStepperReport& rep)
      : sys_(sys), control_(control), n_(sys.reduced.unknowns()) {
    const auto t0 = std::chrono::steady_clock::now();
    const SpmvLayout layout = parse_layout(s.spmv.empty() ? default_spmv_layout() : s.spmv);
    A_ = make_device_spmv(layout, sys.reduced.G);
    rep.spmv = layout_name(layout) + " (" + A_->detail() + ")";
    rep.device = device_description();
    CmgUploadTimes times;
    const std::optional<DeviceCsrView> G = A_->csr();
    if (cmg && s.precond == "cmg" && G && builds_hierarchy_on_device(s, *cmg, sys.reduced.G.rows)) {
      DeviceBuildTimes built;
      M_ = make_device_cmg(build_cmg_hierarchy_on_device(*G, *cmg, &built), cmg_device_options(s, times));
      rep.setup_seconds = built.total;
    } else if (cmg && s.precond == "cmg") {
      const auto t_build = std::chrono::steady_clock::now();
      const CmgHierarchy built = build_cmg_hierarchy(sys.reduced.G, *cmg);
      rep.setup_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_build).count();
      M_ = make_device_preconditioner(sys.reduced.G, &built, s, times);
    } else {
      M_ = make_device_preconditioner(sys.reduced.G, h, s, times);
    }
    pcg_ = std::make_unique<GpuPcg>(n_, !s.profile);

    const RhsTerms terms = rhs_terms(sys);
    b0_ = DeviceBuffer<double>(sys.reduced.b);
    b_ = DeviceBuffer<double>(size_t(n_));
    x_ = DeviceBuffer<double>(x0);
    x_previous_ = DeviceBuffer<double>(x0);  // the first step's guess: x0
    lo_ = DeviceBuffer<double>(x0);
    hi_ = DeviceBuffer<double>(x0);
    term_ptr_ = DeviceBuffer<int32_t>(terms.ptr);
    terms_ = DeviceBuffer<int32_t>(terms.terms);
    const size_t ns = sys.sources.size(), nb = sys.branches.size();
    std::vector<int32_t> plus(nb), minus(nb);
    std::vector<double> offset(nb), g(nb), current(nb), values(ns + nb, 0.0);
    std::vector<uint8_t> inductor(nb);
    for (size_t k = 0; k < nb; ++k) {
      const ReactiveBranch& br = sys.branches[k];
      plus[k] = br.plus, minus[k] = br.minus, offset[k] = br.offset, g[k] = br.g;
      inductor[k] = br.inductor ? 1 : 0;
      current[k] = br.current;
      values[ns + k] = br.history;
    }
    br_plus_ = DeviceBuffer<int32_t>(plus);
    br_minus_ = DeviceBuffer<int32_t>(minus);
    br_offset_ = DeviceBuffer<double>(offset);
    br_g_ = DeviceBuffer<double>(g);
    br_inductor_ = DeviceBuffer<uint8_t>(inductor);
    br_current_ = DeviceBuffer<double>(current);
    values_ = DeviceBuffer<double>(values);
    std::vector<int32_t> probe_unknown;
    std::vector<double> probe_offset;
    for (const Probe& p : probes) probe_unknown.push_back(p.unknown), probe_offset.push_back(p.offset);
    probe_unknown_ = DeviceBuffer<int32_t>(probe_unknown);
    probe_offset_ = DeviceBuffer<double>(probe_offset);
    probed_device_ = DeviceBuffer<double>(probes.size());
    sources_ = std::make_unique<SourceValues>(sys);
    probed_host_ = std::make_unique<PinnedBuffer>(probes.size());
    probed_.resize(probes.size());
    PGSIM_CUDA(cudaDeviceSynchronize());  // the uploads above went through the legacy stream
    pcg_->prepare(*A_, *M_, control_);
    track();  // the probes at t = 0
    rep.upload_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() - rep.setup_seconds;
  }

  SolveResult advance(double t) override {
    const cudaStream_t stream = pcg_->stream();
    const auto ns = std::ptrdiff_t(sys_.sources.size());
    if (ns)
      PGSIM_CUDA(cudaMemcpyAsync(values_.data(), sources_->at(t), size_t(ns) * sizeof(double),
                                 cudaMemcpyHostToDevice, stream));
    // The next step's, at integrate's time for it (any other time is evaluated when asked for).
    sources_->ahead(double(std::llround(t / sys_.h) + 1) * sys_.h);
    launch_step_start(b0_.data(), term_ptr_.data(), terms_.data(), values_.data(), n_, b_.data(), x_.data(),
                      x_previous_.data(), stream);
    const SolveResult r = pcg_->solve(*A_, b_.data(), x_.data(), *M_, control_);
    if (!r.converged) return r;
    const DeviceBranches br{br_plus_.data(),    br_minus_.data(),          br_offset_.data(),
                            br_g_.data(),       br_inductor_.data(),       br_current_.data(),
                            values_.data() + ns, int32_t(sys_.branches.size())};
    launch_advance_branches(br, sys_.method == Integration::Trapezoidal, x_.data(), stream);
    track();
    return r;
  }

  const std::vector<double>& probed() override { return probed_; }

  void unknown_range(std::vector<double>& lo, std::vector<double>& hi) override {
    PGSIM_CUDA(cudaStreamSynchronize(pcg_->stream()));
    lo = lo_.download();
    hi = hi_.download();
  }

  std::vector<LevelStats> levels() const override { return M_->levels(); }

 private:
  // The unknowns' ranges and the probes from x, the probes to the host.
  void track() {
    const cudaStream_t stream = pcg_->stream();
    const auto np = int32_t(probed_.size());
    launch_track(x_.data(), n_, lo_.data(), hi_.data(), probe_unknown_.data(), probe_offset_.data(), np,
                 probed_device_.data(), stream);
    if (np)
      PGSIM_CUDA(cudaMemcpyAsync(probed_host_->data(), probed_device_.data(), size_t(np) * sizeof(double),
                                 cudaMemcpyDeviceToHost, stream));
    PGSIM_CUDA(cudaStreamSynchronize(stream));
    probed_.assign(probed_host_->data(), probed_host_->data() + np);
  }

  const StepSystem& sys_;
  SolveControl control_;
  int32_t n_;
  std::unique_ptr<DeviceSpmv> A_;
  std::unique_ptr<DevicePreconditioner> M_;
  std::unique_ptr<GpuPcg> pcg_;
  DeviceBuffer<double> b0_, b_, x_, x_previous_, lo_, hi_;
  DeviceBuffer<int32_t> term_ptr_, terms_;
  DeviceBuffer<int32_t> br_plus_, br_minus_;
  DeviceBuffer<double> br_offset_, br_g_, br_current_;
  DeviceBuffer<uint8_t> br_inductor_;
  DeviceBuffer<double> values_;  // [S(t) per source | hist per branch]
  DeviceBuffer<int32_t> probe_unknown_;
  DeviceBuffer<double> probe_offset_, probed_device_;
  std::unique_ptr<SourceValues> sources_;
  std::unique_ptr<PinnedBuffer> probed_host_;
  std::vector<double> probed_;
};

// The GPU stepper with every call checked.
class CheckedStepper : public Stepper {
 public:
  explicit CheckedStepper(std::unique_ptr<Stepper> inner) : inner_(std::move(inner)) {}
  SolveResult advance(double t) override {
    return as_gpu_failure([&] { return inner_->advance(t); });
  }
  const std::vector<double>& probed() override { return inner_->probed(); }
  void unknown_range(std::vector<double>& lo, std::vector<double>& hi) override {
    as_gpu_failure([&] {
      inner_->unknown_range(lo, hi);
      return 0;
    });
  }
  std::vector<LevelStats> levels() const override { return inner_->levels(); }

 private:
  std::unique_ptr<Stepper> inner_;
};

}  // namespace

namespace {

// Both make_gpu_stepper: with the hierarchy given (h) or built on the device (cmg).
std::unique_ptr<Stepper> make_stepper(const StepSystem& system, const std::vector<double>& x0,
                                      const std::vector<Probe>& probes, const CmgHierarchy* h, const CmgOptions* cmg,
                                      const SolveControl& control, const GpuSolveSettings& settings,
                                      GpuStepperReport* report) {
  // The device forms b from the current sources only: a moving pad's terms would be dropped
  // silently, so the back-end choice keeping such runs on the CPU is checked here as well.
  if (!system.voltages.empty())
    throw std::logic_error("make_gpu_stepper: the step system has voltage sources with waveforms");
  GpuStepperReport unused;
  return as_gpu_failure([&]() -> std::unique_ptr<Stepper> {
    return std::make_unique<CheckedStepper>(
        std::make_unique<GpuStepper>(system, x0, probes, h, cmg, control, settings, report ? *report : unused));
  });
}

}  // namespace

std::unique_ptr<Stepper> make_gpu_stepper(const StepSystem& system, const std::vector<double>& x0,
                                          const std::vector<Probe>& probes, const CmgHierarchy* hierarchy,
                                          const SolveControl& control, const GpuSolveSettings& settings,
                                          GpuStepperReport* report) {
  return make_stepper(system, x0, probes, hierarchy, nullptr, control, settings, report);
}

std::unique_ptr<Stepper> make_gpu_stepper(const StepSystem& system, const std::vector<double>& x0,
                                          const std::vector<Probe>& probes, const CmgOptions& cmg,
                                          const SolveControl& control, const GpuSolveSettings& settings,
                                          GpuStepperReport* report) {
  return make_stepper(system, x0, probes, nullptr, &cmg, control, settings, report);
}

}  // namespace pgsim::gpu
