// Libraries of tlsql's own that the shell loads when a command first needs them (dlopen), so
// that what they link (cairo for the pictures, libzip and OpenSSL's libcrypto for .zip bundles)
// is not mapped into every process: `tlsql -c "SELECT 1"` peaks 3.8 MiB lower for it (8.8 MiB)
// (docs/performance.md, "Libraries loaded when used").
#pragma once

#include <string>

namespace tlsql {

// The address of `symbol` in `library` (a file name, looked for beside the libtlsql.so this
// process runs: the build folder, or PREFIX/lib once installed), the library loaded on the first
// call and kept. Throws std::runtime_error naming the library, `needed_for` and the loader's reason.
void* module_symbol(const std::string& library, const char* symbol, const std::string& needed_for);

}  // namespace tlsql
