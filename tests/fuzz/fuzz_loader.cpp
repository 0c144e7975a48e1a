// libFuzzer target for the loader: every input is written to a file and loaded the way `tlsql FILE`
// loads it (plain or gzip, chosen by the magic bytes), then the tree and health are read back.
// Any crash, sanitizer report, leak or hang is a bug; LoadError for bad input is the expected outcome.
// Build and run: see tests/fuzz/README.md.
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "session/session.h"

namespace {

std::string input_path() {
  char tmpl[] = "/tmp/tlsql-fuzz-XXXXXX";
  int fd = mkstemp(tmpl);
  if (fd >= 0) close(fd);
  return tmpl;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = input_path();
  FILE* f = fopen(path.c_str(), "wb");
  if (!f) return 0;
  fwrite(data, 1, size, f);
  fclose(f);
  try {
    tlsql::Session session;
    // Small, input-chosen chunk sizes so that every chunk boundary and row-array growth path of
    // the loader is crossed by inputs of a few KB (8 MiB chunks would need 8 MiB inputs).
    tlsql::LoadOptions opt;
    opt.chunk_bytes = size ? 1 + data[size - 1] % 512 : 1;
    session.load(path, opt);
    session.finish();
    for (const char* sql : {"SELECT count(*), sum(depth), max(uid), count(parent) FROM event",
                            "SELECT count(*) FROM kernel", "SELECT * FROM health", "SELECT count(*) FROM launch"}) {
      sqlite3_stmt* s = nullptr;
      if (sqlite3_prepare_v2(session.db(), sql, -1, &s, nullptr) == SQLITE_OK)
        while (sqlite3_step(s) == SQLITE_ROW) {
        }
      sqlite3_finalize(s);
    }
  } catch (const std::exception&) {
    // A clear error for bad input is the expected outcome.
  }
  return 0;
}
