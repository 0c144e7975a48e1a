#include "repl/zip_bundle.h"

#include <fmt/format.h>
#include <zip.h>

#include <stdexcept>

extern "C" void tlsql_write_zip(const std::string& path, const std::vector<tlsql::ZipMember>& members,
                                const std::string& shown) {
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  if (!z) throw std::runtime_error(fmt::format("{}: cannot create the zip file", shown));
  bool ok = true;
  for (const tlsql::ZipMember& m : members) {
    // (libzip reads the bytes where they lie when the archive is closed, below.)
    zip_source_t* src = zip_source_buffer(z, m.data.data(), m.data.size(), 0);
    if (!src || zip_file_add(z, m.name.c_str(), src, ZIP_FL_ENC_UTF_8) < 0) {
      if (src) zip_source_free(src);
      ok = false;
    }
  }
  if (!ok || zip_close(z) != 0) {
    zip_discard(z);  // z is still open when zip_close fails
    throw std::runtime_error(fmt::format("{}: cannot write the zip file", shown));
  }
}
