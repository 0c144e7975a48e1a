#include "repl/modules.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <limits.h>

#include <stdexcept>

namespace tlsql {

namespace {

// The folder of the libtlsql.so this process runs (found among the loaded libraries by name,
// whatever path loaded it), or "" when it cannot be told.
std::string core_folder() {
  void* core = ::dlopen("libtlsql.so", RTLD_NOW | RTLD_NOLOAD);
  if (!core) return "";
  char origin[PATH_MAX + 1] = "";
  if (::dlinfo(core, RTLD_DI_ORIGIN, origin) != 0) origin[0] = '\0';
  ::dlclose(core);  // (the reference RTLD_NOLOAD took)
  return origin;
}

}  // namespace

void* module_symbol(const std::string& library, const char* symbol, const std::string& needed_for) {
  // Loaded from beside libtlsql.so, where the build and `cmake --install` put them: a bare name
  // would be searched in the RUNPATH of whatever called dlopen, and under ASan that is the
  // sanitizer's runtime (it wraps dlopen), which has none; a path also keeps the library from
  // another build (LD_LIBRARY_PATH) out. A library already loaded is returned again, and none is
  // ever closed: its functions' results may outlive any one call.
  const std::string folder = core_folder();
  const std::string path = folder.empty() ? library : folder + "/" + library;
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  void* entry = handle ? ::dlsym(handle, symbol) : nullptr;
  if (!entry) {
    const char* why = ::dlerror();
    throw std::runtime_error(
        fmt::format("{} needs {}, which cannot be loaded: {}", needed_for, library, why ? why : "no such entry"));
  }
  return entry;
}

}  // namespace tlsql
