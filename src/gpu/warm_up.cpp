#include "gpu/warm_up.hpp"

#include <cuda_runtime_api.h>

#include "gpu/cmg_build.hpp"
#include "gpu/cmg_coarsen.hpp"
#include "gpu/cmg_device.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/gpu_node_ids.hpp"
#include "gpu/pcg_gpu.hpp"
#include "gpu/spmv.hpp"
#include "mna/stopwatch.hpp"

namespace pgsim::gpu {
namespace {

// A graph of one memset node captured, instantiated, launched and dropped (no kernel of its own).
void first_graph() {
  cudaStream_t stream = nullptr;
  void* word = nullptr;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess && cudaMalloc(&word, 8) == cudaSuccess &&
      cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess) {
    cudaMemsetAsync(word, 0, 8, stream);
    if (cudaStreamEndCapture(stream, &graph) == cudaSuccess && cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess &&
        cudaGraphLaunch(exec, stream) == cudaSuccess)
      cudaStreamSynchronize(stream);
  }
  if (exec) cudaGraphExecDestroy(exec);
  if (graph) cudaGraphDestroy(graph);
  if (word) cudaFree(word);
  if (stream) cudaStreamDestroy(stream);
}

void first_pinned() {
  void* p = nullptr;
  if (cudaHostAlloc(&p, 64, cudaHostAllocMapped) == cudaSuccess) cudaFreeHost(p);
}

}  // namespace

WarmUpTimes warm_up_device(int device, bool node_ids) {
  WarmUpTimes t;
  Stopwatch step;
  if (cudaSetDevice(device) != cudaSuccess || cudaFree(nullptr) != cudaSuccess) {  // no usable device: nothing more to do
    cudaGetLastError();
    return t;
  }
  t.context = step.lap();
  load_pcg_kernels();
  load_spmv_kernels();
  load_cmg_kernels();
  load_coarsen_kernels();
  load_build_kernels();
  if (node_ids) try {
      load_node_ids_kernels();
    } catch (const GpuError&) {  // left for the numbering's own calls to report
    }
  t.kernels = step.lap();
  first_graph();
  t.graph = step.lap();
  first_pinned();
  t.pinned = step.lap();
  cudaGetLastError();
  return t;
}

}  // namespace pgsim::gpu
