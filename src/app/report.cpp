#include "app/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "app/output_file.hpp"
#include "parser/shown.hpp"

namespace pgsim {

std::string profile_table(const RunReport& r) {
  std::string s = fmt::format("{:<10}{:>12}\n", "phase", "seconds");
  const std::pair<const char*, double> phases[] = {{"parse", r.time.parse},   {"reduce", r.time.reduce},
                                                   {"eliminate", r.time.eliminate}, {"setup", r.time.setup},   {"upload", r.time.upload},
                                                   {"solve", r.time.solve},   {"recover", r.time.recover},
                                                   {"write", r.time.write},
                                                   {"total", r.time.total}};
  for (auto [name, t] : phases) s += fmt::format("{:<10}{:>12.6f}\n", name, t);
  if (!r.levels.empty()) {
    if (!r.smoother.empty()) s += fmt::format("\nCMG smoother: {}\n", r.smoother);
    s += fmt::format("\n{:>5} {:>12} {:>13} {:>9} {:>7} {:>8} {:>11} {:>7}\n", "level", "rows", "nnz", "ratio",
                     "repeats", "visits", "seconds", "share");
    // Each level's own work (not its children's), as a share of the whole PCG solve.
    for (size_t i = 0; i < r.levels.size(); ++i) {
      const auto& l = r.levels[i];
      double ratio = i + 1 < r.levels.size() ? double(r.levels[i + 1].rows) / double(l.rows) : 0.0;
      s += fmt::format("{:>5} {:>12} {:>13} {:>9.3f} {:>7} {:>8.1f} {:>11.6f} {:>6.1f}%\n", i, l.rows, l.nnz, ratio,
                       l.repeats, l.visits, l.seconds, r.time.solve > 0 ? 100 * l.seconds / r.time.solve : 0.0);
    }
  }
  if (r.ranks > 1) {
    s += fmt::format("\n{:>5} {:>12} {:>13} {:>9} {:>12} {:>11} {:>7}\n", "rank", "unknowns", "nnz", "halo",
                     "peak host MB", "seconds", "comm");
    for (size_t k = 0; k < r.per_rank.size(); ++k) {
      const auto& p = r.per_rank[k];
      s += fmt::format("{:>5} {:>12} {:>13} {:>9} {:>12.1f} {:>11.6f} {:>6.1f}%\n", k, p.unknowns, p.nnz, p.halo,
                       double(p.peak_host_bytes) / 1e6, p.seconds,
                       p.seconds > 0 ? 100 * p.communication_seconds / p.seconds : 0.0);
    }
  }
  return s;
}

std::string comparison_text(const Comparison& c) {
  std::string s = fmt::format("compare: {} nodes matched, max |error| {:.3e} V, mean |error| {:.3e} V\n", c.matched,
                              c.max_abs_error, c.mean_abs_error);
  size_t name_width = 32;  // names cut as messages cut them (parser/shown.hpp)
  for (const auto& w : c.worst) name_width = std::max(name_width, shown_plain(w.name).size());
  for (const auto& w : c.worst) s += fmt::format("  {:<{}} {:+.3e} V\n", shown_plain(w.name), name_width, w.value);
  if (c.missing_in_reference || c.missing_in_result) {
    s += fmt::format("  missing: {} netlist nodes not in the reference, {} reference nodes not in the netlist\n",
                     c.missing_in_reference, c.missing_in_result);
    for (const auto& m : c.missing_examples) s += "    " + m + "\n";
  }
  return s;
}

void write_json(const std::string& path, const RunReport& r) {
  using nlohmann::json;
  json j;
  j["netlist"] = r.netlist;
  j["bytes"] = r.bytes;
  j["nodes"] = r.nodes;
  j["unknowns"] = r.unknowns;
  j["nnz"] = r.nnz;
  j["eliminated"] = r.eliminated;
  j["threads"] = r.threads;
  j["parse_threads"] = r.parse_threads;
  j["parse_on"] = r.parse_on_gpu ? "gpu" : "cpu";
  j["peak_host_bytes"] = r.peak_host_bytes;
  j["solver"] = {{"method", r.method},
                 {"precond", r.precond},
                 {"backend", r.backend},
                 {"backend_reason", r.backend_reason},
                 {"iterations", r.result.iterations},
                 {"relative_residual", r.result.relative_residual},
                 {"converged", r.result.converged},
                 {"device", r.device},
                 {"peak_device_bytes", r.peak_device_bytes}};
  if (!r.smoother.empty()) j["solver"]["smoother"] = r.smoother;
  j["timing"] = {{"parse", r.time.parse}, {"reduce", r.time.reduce}, {"eliminate", r.time.eliminate},
                 {"setup", r.time.setup},
                 {"upload", r.time.upload}, {"solve", r.time.solve},   {"recover", r.time.recover},
                 {"write", r.time.write},
                 {"total", r.time.total}};
  j["parse_mb_per_s"] = r.time.parse > 0 ? double(r.bytes) / 1e6 / r.time.parse : 0.0;
  j["levels"] = json::array();
  for (const auto& l : r.levels)
    j["levels"].push_back(
        {{"rows", l.rows}, {"nnz", l.nnz}, {"repeats", l.repeats}, {"visits", l.visits}, {"seconds", l.seconds}});
  if (r.comparison)
    j["compare"] = {{"matched", r.comparison->matched},
                    {"missing", r.comparison->missing_in_reference + r.comparison->missing_in_result},
                    {"max_abs_error", r.comparison->max_abs_error},
                    {"mean_abs_error", r.comparison->mean_abs_error}};
  if (r.ir_drop) j["ir_drop"] = ir_drop_json(*r.ir_drop);
  if (const auto& t = r.transient) {
    j["transient"] = {{"method", t->method},
                      {"tstep", t->tstep},
                      {"tstop", t->tstop},
                      {"steps", t->steps},
                      {"printed_nodes", t->printed_nodes},
                      {"total_iterations", t->total_iterations},
                      {"mean_iterations", t->mean_iterations()},
                      {"max_iterations", t->max_iterations},
                      {"seconds", t->seconds},
                      {"seconds_per_step", t->seconds_per_step()}};
    if (const auto& c = t->comparison)
      j["transient"]["compare"] = {{"nodes", c->nodes},
                                   {"points", c->points},
                                   {"missing", c->missing_in_reference + c->missing_in_result},
                                   {"max_abs_error", c->max_abs_error},
                                   {"mean_abs_error", c->mean_abs_error},
                                   {"worst_node", c->worst_node},
                                   {"worst_time", c->worst_time}};
  }
  j["ranks"] = r.ranks;
  j["per_rank"] = json::array();
  for (const auto& p : r.per_rank)
    j["per_rank"].push_back({{"unknowns", p.unknowns},
                             {"nnz", p.nnz},
                             {"halo", p.halo},
                             {"peak_host_bytes", p.peak_host_bytes},
                             {"peak_device_bytes", p.peak_device_bytes},
                             {"seconds", p.seconds},
                             {"communication_seconds", p.communication_seconds}});
  OutputFile out(path);
  out.write(j.dump(2) + "\n");
  out.commit();
}

}  // namespace pgsim
