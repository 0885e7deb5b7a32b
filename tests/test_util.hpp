#pragma once
// Helpers shared by the tests: temporary folders, files, running the pgsim binary, random vectors.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

namespace pgsim::test {

// max_i |a_i - b_i| (a and b of one size).
inline double max_abs_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

// n values uniform in [-1, 1), the same for the same seed.
inline std::vector<double> random_vector(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::vector<double> v(n);
  for (double& x : v) x = value(rng);
  return v;
}

// A fresh folder under the system's temporary directory, removed at scope exit.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() / ("pgsim-test-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(file(name), std::ios::binary) << text;
    return file(name);
  }

 private:
  std::filesystem::path path_;
};

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// Runs the pgsim binary with `args`; returns its exit code. Output goes to `log`.
inline int run_pgsim(const std::string& args, const std::string& log) {
  std::string cmd = std::string("\"") + PGSIM_EXE + "\" " + args + " >\"" + log + "\" 2>&1";
  int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The same with standard output to `out` and standard error to `err`.
inline int run_pgsim(const std::string& args, const std::string& out, const std::string& err) {
  std::string cmd = std::string("\"") + PGSIM_EXE + "\" " + args + " >\"" + out + "\" 2>\"" + err + "\"";
  int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

inline std::string shared_data(const std::string& name) { return std::string(PGSIM_SHARED_DATA) + "/" + name; }

}  // namespace pgsim::test
