// Output files appear whole or not at all: they are written under a temporary name beside the
// target (PATH.tmp-PID), then renamed over it. Errors name the file: "PATH: cannot write: why".
#pragma once

#include <string>

namespace tlsql {

// The temporary file a target is written through. Refuses targets that are not regular files
// (a device node or FIFO would be replaced, not written). Removed unless commit() renamed it over
// the target: by the destructor, and by a handler when SIGINT / SIGTERM / SIGHUP end the process
// while it exists (handlers installed only where the signal still has its default action).
class TempFile {
 public:
  explicit TempFile(const std::string& target);
  ~TempFile();
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return tmp_; }
  void commit();  // throws std::runtime_error "TARGET: cannot write: why" and removes the temp file

 private:
  std::string target_, tmp_;
  int slot_ = -1;
  bool committed_ = false;
};

// Writes `bytes` to `path` through a TempFile.
void write_file_atomic(const std::string& path, const std::string& bytes);

}  // namespace tlsql
