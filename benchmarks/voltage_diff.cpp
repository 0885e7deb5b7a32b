// Compares two voltages files of one netlist line by line (issue 17: a distributed run against
// a single-process one): the same names in the same order, and how far the values are apart.
// Streams both files (constant memory: a 50M-node file is 2 GB of text), values read by fast_float.
// Prints lines, the largest absolute difference and its line, and the lines whose bytes differ.
// Exit 0 when the layouts agree and max |a - b| <= TOL, 1 when not, 2 on a usage or read error.
//   build/benchmarks/voltage_diff v1.txt v2.txt 1e-9
#include <fast_float/fast_float.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>

namespace {

struct Line {
  std::string_view name;
  double value = 0;
};

// "name value" as write_voltages writes it; false for anything else.
bool split(const std::string& text, Line& line) {
  const size_t space = text.find(' ');
  if (space == std::string::npos || space == 0) return false;
  line.name = std::string_view(text).substr(0, space);
  const char* first = text.data() + space + 1;
  const char* last = text.data() + text.size();
  const auto r = fast_float::from_chars(first, last, line.value);
  return r.ec == std::errc() && r.ptr == last;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: voltage_diff A B TOL\n");
    return 2;
  }
  const double tolerance = std::strtod(argv[3], nullptr);
  std::ifstream a(argv[1]), b(argv[2]);
  if (!a || !b) {
    std::fprintf(stderr, "voltage_diff: cannot open %s\n", !a ? argv[1] : argv[2]);
    return 2;
  }
  std::string ta, tb;
  uint64_t lines = 0, differing_bytes = 0, worst_line = 0;
  double worst = 0;
  for (;;) {
    const bool more_a = static_cast<bool>(std::getline(a, ta)), more_b = static_cast<bool>(std::getline(b, tb));
    if (!more_a || !more_b) {
      if (more_a != more_b) {
        std::printf("layout differs: %s ends first, after %llu lines\n", more_a ? argv[2] : argv[1],
                    static_cast<unsigned long long>(lines));
        return 1;
      }
      break;
    }
    ++lines;
    Line la, lb;
    if (!split(ta, la) || !split(tb, lb) || la.name != lb.name) {
      std::printf("layout differs at line %llu: '%s' vs '%s'\n", static_cast<unsigned long long>(lines), ta.c_str(),
                  tb.c_str());
      return 1;
    }
    if (ta != tb) ++differing_bytes;
    const double d = std::fabs(la.value - lb.value);
    if (d > worst || std::isnan(d)) {
      worst = std::isnan(d) ? INFINITY : d;
      worst_line = lines;
    }
  }
  std::printf("lines %llu, max |a - b| %.3e V (line %llu), lines with other bytes %llu\n",
              static_cast<unsigned long long>(lines), worst, static_cast<unsigned long long>(worst_line),
              static_cast<unsigned long long>(differing_bytes));
  return worst <= tolerance ? 0 : 1;
}
