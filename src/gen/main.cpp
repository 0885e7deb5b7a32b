// pgsim-gen: writes a reproducible IBM-style power-grid netlist of a requested size.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>

#include "app/exit_codes.hpp"
#include "gen/grid.hpp"
#include "gen/grid_writer.hpp"
#include "gen/text_sink.hpp"

namespace {

constexpr double kMinNodes = 100, kMaxNodes = 4e9;

// "30000", "2.5e6", "0.1M", "50M", "10k": the node count, or -1 when it is not a number.
double parse_count(const std::string& text) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    return -1;
  }
  std::string suffix = text.substr(used);
  if (suffix == "k" || suffix == "K") v *= 1e3;
  else if (suffix == "m" || suffix == "M") v *= 1e6;
  else if (suffix == "g" || suffix == "G") v *= 1e9;
  else if (!suffix.empty()) return -1;
  return std::isfinite(v) ? v : -1;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace pgsim;
  std::string nodes_text, output;
  gen::GridParams params;
  CLI::App app{"pgsim-gen: write an IBM-style power-grid netlist (VDD and GND nets, metal layers, vias, pads, loads)"};
  app.add_option("--nodes", nodes_text, "approximate node count (at least this many): 30000, 1e6, 0.1M, 50M")
      ->required();
  app.add_option("--layers", params.shape.layers, "metal layers per net, alternating direction, coarser pitch higher up")
      ->check(CLI::Range(2, 12))
      ->capture_default_str();
  app.add_option("--seed", params.seed, "seed of the resistance jitter and the load placement and values")
      ->capture_default_str();
  app.add_option("--pads-every", params.shape.pads_every,
                 "pads on every K-th top-layer stripe, as far apart along it (a square lattice)")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  app.add_option("--load-fraction", params.load_fraction, "share of bottom-layer VDD taps that draw a load current")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  CLI::Option* tran = app.add_option("--tran", params.tran_stop,
                 "a transient netlist to this stop time in seconds (e.g. 1e-8: 1000 steps of 10 ps): pads behind "
                 "1 nH, a 0.12 nF decap and a staggered PULSE per load, .tran and .print (README, pgsim-gen)");
  app.add_option("-o,--output", output, "netlist file to write ('-' for standard output)")->required();
  bool quiet = false;
  app.add_flag("-q,--quiet", quiet, "no summary line on standard error");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitInput;
  }
  double requested = parse_count(nodes_text);
  if (requested < kMinNodes || requested > kMaxNodes) {
    std::fprintf(stderr, "pgsim-gen: --nodes %s: expected a count from 100 to 4e9 (suffixes k, M, G allowed)\n",
                 nodes_text.c_str());
    return kExitInput;
  }
  if (tran->count() && !(params.tran_stop > 0 && std::isfinite(params.tran_stop))) {
    std::fprintf(stderr, "pgsim-gen: --tran %s: expected a stop time in seconds, above 0 (1e-8: 1000 steps of 10 ps)\n",
                 tran->as<std::string>().c_str());
    return kExitInput;
  }
  const auto nodes = static_cast<int64_t>(std::ceil(requested));
  // The header names the parameters, not the output path, so equal parameters give equal bytes.
  params.command_line = "pgsim-gen --nodes " + std::to_string(nodes) +
                        " --layers " + std::to_string(params.shape.layers) + " --seed " + std::to_string(params.seed) +
                        " --pads-every " + std::to_string(params.shape.pads_every) + " --load-fraction " +
                        CLI::detail::to_string(params.load_fraction) +
                        (params.tran_stop > 0 ? " --tran " + CLI::detail::to_string(params.tran_stop) : "");

  auto start = std::chrono::steady_clock::now();
  try {
    params.shape = gen::shape_for_nodes(nodes, params.shape.layers, params.shape.pads_every);
    gen::TextSink out(output);
    gen::GridCounts c = gen::write_grid(params, out);
    out.close();
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double mb = static_cast<double>(out.bytes_written()) / 1e6;
    if (!quiet)
      std::fprintf(stderr,
                   "pgsim-gen: %lld nodes (requested %.0f, %+.3f%%), %lld resistors, %lld vias, %lld pads, %lld "
                   "loads, %lld capacitors, %lld inductors; %.1f MB in %.2f s (%.0f MB/s)\n",
                   static_cast<long long>(c.nodes), requested, 100.0 * (static_cast<double>(c.nodes) / requested - 1),
                   static_cast<long long>(c.resistors), static_cast<long long>(c.vias),
                   static_cast<long long>(c.pads), static_cast<long long>(c.loads),
                   static_cast<long long>(c.capacitors), static_cast<long long>(c.inductors), mb, seconds,
                   mb / seconds);
    return kExitOk;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pgsim-gen: %s\n", e.what());
    // A partial netlist would parse as a smaller grid: remove it (but never a device or a pipe).
    std::error_code ec;
    if (output != "-" && std::filesystem::is_regular_file(output, ec)) std::filesystem::remove(output, ec);
    return kExitSystem;
  }
}
