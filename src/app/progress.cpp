#include "app/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace pgsim {
namespace {

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void write_stderr(const std::string& text) {
  std::fputs(text.c_str(), stderr);
  std::fflush(stderr);
}

}  // namespace

ProgressLine::ProgressLine(bool enabled) : ProgressLine(enabled, steady_seconds, write_stderr) {}

ProgressLine::ProgressLine(bool enabled, Clock clock, Sink sink)
    : enabled_(enabled), clock_(std::move(clock)), sink_(std::move(sink)), start_(enabled_ ? clock_() : 0.0) {}

ProgressLine::~ProgressLine() { finish(); }

bool ProgressLine::due() const {
  if (!enabled_) return false;
  const double now = clock_();
  return now - start_ >= kDelay && (last_ < 0 || now - last_ >= kInterval);
}

void ProgressLine::update(const std::string& text) {
  if (!due()) return;
  last_ = clock_();
  // Pad with spaces so a shorter text covers the previous one completely.
  std::string line = "\r" + text;
  if (text.size() < shown_) line.append(shown_ - text.size(), ' ');
  shown_ = text.size();
  sink_(line);
}

void ProgressLine::finish() {
  if (shown_ == 0) return;
  sink_("\r" + std::string(shown_, ' ') + "\r");
  shown_ = 0;
}

bool progress_wanted(bool quiet) { return !quiet && isatty(fileno(stderr)); }

void show_parse_progress(uint64_t done, uint64_t total, void* line) {
  auto& progress = *static_cast<ProgressLine*>(line);
  if (!progress.due()) return;  // formatting costs more than the check
  if (total == 0)  // a pipe: its size is not known
    progress.update(fmt::format("parse: {:.1f} MB read", double(done) / 1e6));
  else
    progress.update(fmt::format("parse: {:.0f}% of {:.1f} MB", 100.0 * double(done) / double(total), double(total) / 1e6));
}

std::function<void(int, double)> solve_progress_callback(ProgressLine& line) {
  return [&line](int iteration, double residual) {
    if (line.due()) line.update(fmt::format("solve: iteration {}, relative residual {:.2e}", iteration, residual));
  };
}

}  // namespace pgsim
