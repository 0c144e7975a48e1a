// Writing a .zip (the replay bundle of .export-replay FILE.zip): libtlsql_zip.so, loaded when a
// .zip is written (repl/modules.h), since libzip brings OpenSSL's libcrypto, 1.4 MiB of every
// process's memory once mapped.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tlsql {

struct ZipMember {
  std::string name;
  std::string_view data;
};

inline constexpr const char* kZipLibrary = "libtlsql_zip.so";
inline constexpr const char* kZipEntry = "tlsql_write_zip";

}  // namespace tlsql

// The library's entry (named by kZipEntry): a new zip file at `path` (replaced if there) holding
// `members`, deflated; throws std::runtime_error naming `shown` (the path the user gave) when it
// cannot be written.
extern "C" void tlsql_write_zip(const std::string& path, const std::vector<tlsql::ZipMember>& members,
                                const std::string& shown);

namespace tlsql {
using WriteZip = decltype(&tlsql_write_zip);
}  // namespace tlsql
