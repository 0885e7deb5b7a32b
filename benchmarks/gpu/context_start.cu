// A process's CUDA start (issue 17, session 22): the driver's initialisation (the first runtime
// call: cudaGetDeviceCount) and the context on device DEVICE (cudaSetDevice, cudaFree(0)), from
// the process's start. Run it with CUDA_VISIBLE_DEVICES unset and set to one device, alone and two
// at once (as two ranks start), to see what the GPUs a process sees cost it:
//   build/context_start 0; CUDA_VISIBLE_DEVICES=0 build/context_start 0
//   build/context_start 0 & build/context_start 1; wait
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess) {
    std::fprintf(stderr, "no CUDA device\n");
    return 1;
  }
  const Clock::time_point initialised = Clock::now();
  if (cudaSetDevice(argc > 1 ? std::atoi(argv[1]) : 0) != cudaSuccess || cudaFree(nullptr) != cudaSuccess) {
    std::fprintf(stderr, "no context on that device\n");
    return 1;
  }
  const Clock::time_point made = Clock::now();
  std::printf("devices %d: init %.3f s, context %.3f s\n", devices, std::chrono::duration<double>(initialised - start).count(),
              std::chrono::duration<double>(made - initialised).count());
  return 0;
}
