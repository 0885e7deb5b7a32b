#pragma once
// A one-line progress display for long phases (parse, solve): shown on a terminal only, and only
// once the phase has run for a second, so short runs and redirected output stay clean.
#include <cstdint>
#include <functional>
#include <string>

namespace pgsim {

class ProgressLine {
 public:
  using Clock = std::function<double()>;                 // seconds, monotonic
  using Sink = std::function<void(const std::string&)>;  // receives the raw text, "\r" included

  static constexpr double kDelay = 1.0;     // nothing before the phase has run this long
  static constexpr double kInterval = 0.1;  // then at most one update this often

  // Writes to stderr with the steady clock.
  explicit ProgressLine(bool enabled);
  ProgressLine(bool enabled, Clock clock, Sink sink);
  ~ProgressLine();  // finish()
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // Whether an update would be shown now; callers format their text only then.
  bool due() const;
  // Shows `text` over the previous update if due().
  void update(const std::string& text);
  // Erases the line if anything was shown, so later messages start on a clean line.
  void finish();

 private:
  bool enabled_;
  Clock clock_;
  Sink sink_;
  double start_;
  double last_ = -1;    // time of the last update shown; < 0: none yet
  size_t shown_ = 0;    // length of the text on the line now
};

// Progress is for people watching: stderr is a terminal and -q was not given.
bool progress_wanted(bool quiet);

// "parse: 45% of 412.3 MB" ("parse: 12.0 MB read" from a pipe), as a ParseOptions::progress callback whose user pointer is a ProgressLine.
void show_parse_progress(uint64_t done, uint64_t total, void* line);
// "solve: iteration 120, relative residual 3.10e-07", as a SolveControl::progress callback.
std::function<void(int, double)> solve_progress_callback(ProgressLine& line);

}  // namespace pgsim
