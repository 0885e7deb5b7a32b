#pragma once
// pgsim --version: what this binary is and what it runs on.
#include <string>

namespace pgsim {

// Lines "pgsim VERSION", then "commit:", "build type:", "CUDA:" (runtime and driver versions and
// the device, or "not built"), "OpenMP:" (threads a parallel phase uses); no final newline.
std::string version_text();

}  // namespace pgsim
