#include "tran/stepper.hpp"

#include <omp.h>

#include <algorithm>
#include <unordered_map>

namespace pgsim {

std::vector<Probe> probes_of(const StepSystem& sys, const std::vector<uint32_t>& nodes) {
  const ReducedSystem& r = sys.reduced;
  std::vector<Probe> probes;
  probes.reserve(nodes.size());
  for (uint32_t id : nodes) probes.push_back({r.unknown_of_node[id], r.offset_of_node[id]});
  std::unordered_map<uint32_t, int32_t> moving_of_node;
  for (size_t m = 0; m < sys.moving.size(); ++m) moving_of_node.emplace(sys.moving[m].node, int32_t(m));
  for (size_t k = 0; k < nodes.size(); ++k) {
    const auto it = moving_of_node.find(nodes[k]);
    if (it != moving_of_node.end()) probes[k].moving = it->second;
  }
  return probes;
}

CpuStepper::CpuStepper(StepSystem& system, StepSolver& solver, std::vector<double> x0, std::vector<Probe> probes)
    : system_(system), solver_(solver), sources_(system), x_(std::move(x0)), x_previous_(x_), lo_(x_), hi_(x_), probes_(std::move(probes)) {
  for (size_t m = 0; m < system_.moving.size(); ++m) moving_lo_.push_back(moving_voltage(m));
  moving_hi_ = moving_lo_;
}

double CpuStepper::moving_voltage(size_t m) const {
  const MovingNode& node = system_.moving[m];
  return node.offset + (node.unknown >= 0 ? x_[size_t(node.unknown)] : 0.0);
}

SolveResult CpuStepper::advance(double t) {
  changes_.resize(system_.sources.size());
  const int threads = solver_.threads();
  sources_.at(t, changes_.data(), threads);
  move_offsets(system_, t, voltage_changes_);
  step_rhs(system_, changes_, voltage_changes_, b_);
  for (size_t i = 0; i < x_.size(); ++i) {  // the first guess, 2 x_n - x_{n-1}
    const double xi = x_[i];
    x_[i] = 2.0 * xi - x_previous_[i];
    x_previous_[i] = xi;
  }
  const SolveResult r = solver_.solve(b_, x_);
  if (!r.converged) return r;
  advance_history(system_, x_, threads);
  const std::ptrdiff_t n = std::ptrdiff_t(x_.size());
  // Memory-bound and a few us per 10^5 unknowns: threads only where that outweighs their fork, or
  // where the solver has woken them anyway.
#pragma omp parallel for schedule(static, 4096) num_threads(threads > 1 ? threads : omp_get_max_threads()) \
    if (threads > 1 || n > 262144)
  for (std::ptrdiff_t i = 0; i < n; ++i) {
    lo_[size_t(i)] = std::min(lo_[size_t(i)], x_[size_t(i)]);
    hi_[size_t(i)] = std::max(hi_[size_t(i)], x_[size_t(i)]);
  }
  for (size_t m = 0; m < moving_lo_.size(); ++m) {
    moving_lo_[m] = std::min(moving_lo_[m], moving_voltage(m));
    moving_hi_[m] = std::max(moving_hi_[m], moving_voltage(m));
  }
  return r;
}

const std::vector<double>& CpuStepper::probed() {
  probed_.resize(probes_.size());
  for (size_t k = 0; k < probes_.size(); ++k)
    probed_[k] = (probes_[k].moving >= 0 ? system_.moving[size_t(probes_[k].moving)].offset : probes_[k].offset) +
                 (probes_[k].unknown >= 0 ? x_[size_t(probes_[k].unknown)] : 0.0);
  return probed_;
}

void CpuStepper::unknown_range(std::vector<double>& lo, std::vector<double>& hi) {
  lo = lo_;
  hi = hi_;
}

void CpuStepper::moving_range(std::vector<double>& lo, std::vector<double>& hi) {
  lo = moving_lo_;
  hi = moving_hi_;
}

}  // namespace pgsim
