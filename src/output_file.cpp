#include "src/output_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>
#include <stdexcept>
#include <vector>

#include "src/sql_names.h"

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
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) {
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

struct Input {
  dev_t device;
  ino_t inode;
  std::string path;
};
std::mutex g_inputs_mu;
std::vector<Input> g_inputs;
std::set<sqlite3*> g_watched;

// The files a watched connection reads: its database files, and the traces their `trace` tables
// name (a saved database's original trace, which --overlay reads).
std::vector<std::string> connection_inputs(sqlite3* db) {
  std::vector<std::string> out, schemas;
  for (int i = 0; const char* name = sqlite3_db_name(db, i); ++i) {
    schemas.emplace_back(name);
    if (const char* f = sqlite3_db_filename(db, name); f && *f) out.emplace_back(f);
  }
  for (const std::string& s : schemas) {
    sqlite3_stmt* q = nullptr;
    const std::string sql = "SELECT path FROM " + quote_identifier(s) + ".trace";
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &q, nullptr) == SQLITE_OK)
      while (sqlite3_step(q) == SQLITE_ROW)
        if (auto f = sqlite3_column_text(q, 0)) out.emplace_back((const char*)f);
    sqlite3_finalize(q);
  }
  return out;
}

// The temporary name for `target` in its folder: ".tmp-PID" added, the name shortened to fit
// NAME_MAX (a legal 253-byte name has no room for the suffix).
std::string temp_name(const std::string& target) {
  const std::string suffix = ".tmp-" + std::to_string(getpid());
  const size_t slash = target.rfind('/');
  const size_t name_at = slash == std::string::npos ? 0 : slash + 1;
  std::string name = target.substr(name_at);
  if (name.size() + suffix.size() > NAME_MAX) name.resize(NAME_MAX - suffix.size());
  return target.substr(0, name_at) + name + suffix;
}

}  // namespace

void note_input(const std::string& path, unsigned long device, unsigned long inode) {
  std::lock_guard<std::mutex> l(g_inputs_mu);
  for (const Input& in : g_inputs)
    if (in.device == device && in.inode == inode) return;
  g_inputs.push_back({(dev_t)device, (ino_t)inode, path});
}

void note_input(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) note_input(path, st.st_dev, st.st_ino);
}

void watch_connection(sqlite3* db) {
  std::lock_guard<std::mutex> l(g_inputs_mu);
  g_watched.insert(db);
}

void unwatch_connection(sqlite3* db) {
  std::lock_guard<std::mutex> l(g_inputs_mu);
  g_watched.erase(db);
}

void refuse_input(const std::string& target, sqlite3* also) {
  // An empty name names no file: without this, `-o ""` would succeed having written nothing.
  if (target.empty()) throw std::runtime_error("'': cannot write: an empty file name");
  struct stat t {};
  if (::stat(target.c_str(), &t) != 0) return;  // nothing there yet: nothing it could destroy
  std::vector<Input> inputs;
  std::vector<sqlite3*> watched;
  {
    std::lock_guard<std::mutex> l(g_inputs_mu);
    inputs = g_inputs;
    watched.assign(g_watched.begin(), g_watched.end());
  }
  if (also) watched.push_back(also);
  for (sqlite3* db : watched)
    for (const std::string& f : connection_inputs(db)) {
      struct stat st {};
      if (::stat(f.c_str(), &st) == 0) inputs.push_back({st.st_dev, st.st_ino, f});
    }
  for (const Input& in : inputs)
    if (in.device == t.st_dev && in.inode == t.st_ino)
      throw std::runtime_error(fmt::format("{}: cannot write: it is an input of this session ({})", target, in.path));
}

TempFile::TempFile(const std::string& target) : target_(target), tmp_(temp_name(target)) {
  refuse_input(target);
  std::error_code ec;
  auto st = std::filesystem::status(target, ec);
  if (!ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st))
    throw std::runtime_error(fmt::format("{}: cannot write: not a regular file", target));
  std::filesystem::remove(tmp_, ec);  // one a killed run left (a link there is removed, not followed)
  // The handler knows the name before the file exists: a signal that arrives the moment after it
  // is created (what a watcher of the folder would send on seeing it) still removes it.
  install_handlers();
  if (tmp_.size() < sizeof g_paths[0])
    for (int i = 0; i < kSlots && slot_ < 0; ++i)
      if (int free = 0; g_state[i].compare_exchange_strong(free, 1)) {
        std::strcpy(g_paths[i], tmp_.c_str());
        g_state[i] = 2;
        slot_ = i;
      }
  // Created here, new: O_EXCL fails on anything already at the name and O_NOFOLLOW on a link put
  // there since, so what is written is never another file someone placed at the temporary name.
  fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd_ < 0) {
    const int err = errno;
    if (slot_ >= 0) g_state[slot_] = 0;
    throw std::runtime_error(fmt::format("{}: cannot write: {}", target, std::strerror(err)));
  }
}

TempFile::~TempFile() {
  if (fd_ >= 0) ::close(fd_);
  if (slot_ >= 0) g_state[slot_] = 0;
  std::error_code ec;
  if (!committed_) std::filesystem::remove(tmp_, ec);
}

void TempFile::commit() {
  if (fd_ >= 0) ::close(fd_), fd_ = -1;
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
  FILE* f = ::fdopen(::dup(tmp.fd()), "wb");  // the file TempFile created, not whatever the name holds now
  if (!f) throw std::runtime_error(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  int err = ok ? 0 : errno;
  if (std::fclose(f) != 0 && ok) ok = false, err = errno;
  if (!ok) throw std::runtime_error(fmt::format("{}: cannot write: {}", path, std::strerror(err ? err : EIO)));
  tmp.commit();
}

}  // namespace tlsql
