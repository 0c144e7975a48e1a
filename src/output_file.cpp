#include "src/output_file.h"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <stdexcept>

namespace tlsql {

namespace {

// Temp files that exist right now, for the signal handler: fixed storage, as a handler may only
// make async-signal-safe calls (unlink, signal, raise).
constexpr int kSlots = 16;
char g_paths[kSlots][4096];
std::atomic<int> g_state[kSlots];  // 0 free, 1 being filled, 2 a path the handler removes

void remove_temp_files_and_die(int sig) {
  for (int i = 0; i < kSlots; ++i)
    if (g_state[i].load() == 2) ::unlink(g_paths[i]);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void install_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction old {};
      if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) {
        struct sigaction sa {};
        sa.sa_handler = remove_temp_files_and_die;
        sigemptyset(&sa.sa_mask);
        sigaction(sig, &sa, nullptr);
      }
    }
  });
}

}  // namespace

TempFile::TempFile(const std::string& target) : target_(target), tmp_(target + ".tmp-" + std::to_string(getpid())) {
  std::error_code ec;
  auto st = std::filesystem::status(target, ec);
  if (!ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st))
    throw std::runtime_error(fmt::format("{}: cannot write: not a regular file", target));
  std::filesystem::remove(tmp_, ec);
  install_handlers();
  if (tmp_.size() < sizeof g_paths[0])
    for (int i = 0; i < kSlots && slot_ < 0; ++i)
      if (int free = 0; g_state[i].compare_exchange_strong(free, 1)) {
        std::strcpy(g_paths[i], tmp_.c_str());
        g_state[i] = 2;
        slot_ = i;
      }
}

TempFile::~TempFile() {
  if (slot_ >= 0) g_state[slot_] = 0;
  std::error_code ec;
  if (!committed_) std::filesystem::remove(tmp_, ec);
}

void TempFile::commit() {
  std::error_code ec, ignored;
  std::filesystem::rename(tmp_, target_, ec);
  if (ec) {
    std::filesystem::remove(tmp_, ignored);
    throw std::runtime_error(fmt::format("{}: cannot write: {}", target_, ec.message()));
  }
  committed_ = true;
}

void write_file_atomic(const std::string& path, const std::string& bytes) {
  TempFile tmp(path);
  FILE* f = std::fopen(tmp.path().c_str(), "wb");
  if (!f) throw std::runtime_error(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  int err = ok ? 0 : errno;
  if (std::fclose(f) != 0 && ok) ok = false, err = errno;
  if (!ok) throw std::runtime_error(fmt::format("{}: cannot write: {}", path, std::strerror(err ? err : EIO)));
  tmp.commit();
}

}  // namespace tlsql
