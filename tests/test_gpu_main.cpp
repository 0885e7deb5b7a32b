// main() for the GPU tests: exit 77 (ctest: Skipped) when no CUDA device can be used. Listing the
// tests (catch_discover_tests does at build time) needs no device.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>
#include <string>

#include "gpu/device_info.hpp"

int main(int argc, char** argv) {
  bool listing = false;
  for (int i = 1; i < argc; ++i) listing = listing || std::strncmp(argv[i], "--list", 6) == 0;
  std::string why;
  if (!listing && !pgsim::gpu::device_available(&why)) {
    std::printf("skipped: %s\n", why.c_str());
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
