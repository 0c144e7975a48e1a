#include "repl/modules.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <stdexcept>

namespace tlsql {

void* module_symbol(const std::string& library, const char* symbol, const std::string& needed_for) {
  // (dlopen from this binary searches its RUNPATH; a library already loaded is returned again,
  // and a library is never closed: its functions' results may outlive any one call.)
  void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  void* entry = handle ? ::dlsym(handle, symbol) : nullptr;
  if (!entry) {
    const char* why = ::dlerror();
    throw std::runtime_error(
        fmt::format("{} needs {}, which cannot be loaded: {}", needed_for, library, why ? why : "no such entry"));
  }
  return entry;
}

}  // namespace tlsql
