#include "mna/shared_library.hpp"

namespace pgsim {

void* open_shared_library(const std::string& soname, const std::string& fallback_dir, std::string& error) {
  if (void* handle = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
  const char* first = dlerror();
  error = first != nullptr ? first : "cannot open " + soname;
  if (fallback_dir.empty()) return nullptr;
  return dlopen((fallback_dir + "/" + soname).c_str(), RTLD_NOW | RTLD_LOCAL);
}

}  // namespace pgsim
