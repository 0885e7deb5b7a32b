// spmv_bench: y = A x in every device layout (segSpMV, CSR-vector, cuSPARSE) on the system
// matrix of a netlist (after chain elimination) and on every level of its CMG hierarchy.
// Usage: spmv_bench NETLIST [--reps N]
// Prints one row per matrix and layout: median kernel time (CUDA events, warm), the effective
// bandwidth over the bytes a CSR SpMV must move, and which layout is fastest.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/device_info.hpp"
#include "gpu/spmv.hpp"
#include "cmg/builder.hpp"
#include "mna/chain_elimination.hpp"
#include "mna/reduce.hpp"
#include "parser/netlist.hpp"

using namespace pgsim;

namespace {

// Bytes a CSR SpMV must move at least: values, columns, row offsets, x once, y once.
double csr_floor_bytes(const CsrMatrix& A) {
  return double(A.nnz()) * 12 + double(A.rows + 1) * 4 + double(A.rows) * 16;
}

void bench_matrix(const std::string& name, const CsrMatrix& A, int reps) {
  std::vector<double> x(static_cast<size_t>(A.rows), 1.0);
  gpu::DeviceBuffer<double> dx(x), dy(x.size());
  double best = 1e300;
  std::string best_name;
  std::vector<std::pair<std::string, double>> rows;
  for (auto layout : gpu::all_layouts()) {
    auto spmv = gpu::make_device_spmv(layout, A);
    const double ms = bench::median_ms(nullptr, 10, reps, [&](cudaStream_t s) { spmv->multiply(dx.data(), dy.data(), s); });
    const std::string label = gpu::layout_name(layout) + " (" + spmv->detail() + ")";
    rows.emplace_back(label, ms);
    if (ms < best) {
      best = ms;
      best_name = gpu::layout_name(layout);
    }
  }
  for (const auto& [label, ms] : rows)
    std::printf("| %-8s | %10d | %11lld | %-28s | %9.2f | %7.0f | %s\n", name.c_str(), A.rows, (long long)A.nnz(),
                label.c_str(), ms * 1e3, csr_floor_bytes(A) / (ms * 1e-3) / 1e9,
                label.rfind(best_name, 0) == 0 ? "fastest |" : "        |");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: spmv_bench NETLIST [--reps N]\n");
    return 2;
  }
  int reps = 50;
  for (int i = 2; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--reps") reps = std::atoi(argv[i + 1]);
  std::string why;
  if (!gpu::device_available(&why)) {
    std::fprintf(stderr, "no GPU: %s\n", why.c_str());
    return 77;
  }
  Netlist netlist = parse_netlist(argv[1]);
  ReducedSystem sys = reduce(netlist);
  std::printf("%s; %s: %d unknowns; median of %d warm runs (CUDA events)\n\n", gpu::device_description().c_str(),
              argv[1], sys.G.rows, reps);
  std::printf("| matrix   |       rows |         nnz | layout                       |   time us |    GB/s | best    |\n");
  std::printf("|----------|-----------:|------------:|------------------------------|----------:|--------:|---------|\n");
  // The system PCG multiplies by (after chain elimination, as in pgsim), then every CMG level.
  EliminatedSystem kept = eliminate_chains(sys.G, sys.b);
  bench_matrix("G", kept.G, reps);
  const CmgHierarchy h = build_cmg_hierarchy(kept.G);
  for (size_t l = 0; l < h.levels.size(); ++l) bench_matrix("level " + std::to_string(l), h.levels[l].A, reps);
  std::printf("\nGB/s: bytes a CSR SpMV must move (12 per nonzero, 4 per row offset, 8 per x and y entry) / time.\n");
  return 0;
}
