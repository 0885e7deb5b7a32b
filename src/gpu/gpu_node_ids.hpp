#pragma once
// The node ids of a distributed parse numbered on the ranks' GPUs (dist/node_names_on_device.hpp
// says what and why). Plain C++ (no CUDA headers).
#include <cstdint>
#include <memory>

#include "dist/node_names_on_device.hpp"
#include "gpu/device_buffer.hpp"

namespace pgsim::gpu {

// The local names 1 .. count of a range read on device `device` (gpu/gpu_parse.hpp), kept there:
// name k + 1's text is chars[offsets[k], offsets[k + 1]) (offsets: count + 1 of them).
std::unique_ptr<dist::NodeNamesOnDevice> keep_node_names(DeviceBuffer<char> chars, DeviceBuffer<uint64_t> offsets,
                                                         uint32_t count, int device);

// Loads the numbering's kernels (CUDA loads each on its first launch), for the GPU warm-up
// (gpu/warm_up.hpp). Throws GpuError.
void load_node_ids_kernels();

}  // namespace pgsim::gpu
