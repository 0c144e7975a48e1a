// Output files appear whole or not at all: they are written under a temporary name beside the
// target (PATH.tmp-PID), then renamed over it. Errors name the file: "PATH: cannot write: why".
#pragma once

#include <string>

namespace tlsql {

std::string temp_path_for(const std::string& path);
// Renames the finished `tmp` to `path`; on failure removes `tmp` and throws std::runtime_error.
void replace_with(const std::string& tmp, const std::string& path);
// Writes `bytes` to `path` through a temporary file.
void write_file_atomic(const std::string& path, const std::string& bytes);

}  // namespace tlsql
