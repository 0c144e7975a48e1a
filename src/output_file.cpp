#include "output_file.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace tlsql {

std::string temp_path_for(const std::string& path) { return path + ".tmp-" + std::to_string(getpid()); }

void replace_with(const std::string& tmp, const std::string& path) {
  std::error_code ec, ignored;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ignored);
    throw std::runtime_error(fmt::format("{}: cannot write: {}", path, ec.message()));
  }
}

void write_file_atomic(const std::string& path, const std::string& bytes) {
  const std::string tmp = temp_path_for(path);
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw std::runtime_error(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  ok = std::fclose(f) == 0 && ok;
  if (!ok) {
    std::filesystem::remove(tmp);
    throw std::runtime_error(fmt::format("{}: cannot write: write failed", path));
  }
  replace_with(tmp, path);
}

}  // namespace tlsql
