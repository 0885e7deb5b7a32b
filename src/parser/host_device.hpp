#pragma once
// PGSIM_HOST_DEVICE marks a function that CUDA code calls on the device as well as host code on
// the host (one source for both, so they compute the same thing); plain C++ elsewhere. Here in the
// lowest library, which every other includes.
#if defined(__CUDACC__)
#define PGSIM_HOST_DEVICE __host__ __device__
#else
#define PGSIM_HOST_DEVICE
#endif
