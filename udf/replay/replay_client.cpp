#include "udf/replay/replay_client.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <vector>

extern char** environ;

namespace tlsql {

using nlohmann::json;

ReplayClient& ReplayClient::instance() {
  static ReplayClient client;
  return client;
}

ReplayClient::ReplayClient() {
  // A fork while another thread of the parent is inside request() (Python threads release the GIL
  // in sqlite3) copies mutex_ locked, and buffer_ perhaps half-written, into a child with no such
  // thread: the child gets a fresh mutex and buffer. (glibc drops this handler if the extension is
  // unloaded.) The worker itself is forgotten by forget_if_inherited on the child's next request.
  pthread_atfork(nullptr, nullptr, [] {
    ReplayClient& c = instance();
    new (&c.mutex_) std::mutex();
    new (&c.buffer_) std::string();  // the old one is leaked: it may be mid-update
  });
}

ReplayClient::~ReplayClient() { stop(false); }

void ReplayClient::forget_if_inherited() {
  if (pid_ < 0 || owner_ == getpid()) return;
  // This process's copy only: the parent's socket stays open. A child that closed every descriptor
  // (a daemon) may have reused the number for a file of its own: close it only if it is still the
  // socket.
  struct stat st;
  if (fd_ >= 0 && fstat(fd_, &st) == 0 && st.st_dev == sock_dev_ && st.st_ino == sock_ino_) close(fd_);
  fd_ = -1;
  pid_ = -1;
  buffer_.clear();
}

std::string replay_worker_path() {
  if (const char* p = getenv("TLSQL_REPLAY_WORKER")) return p;
  // Beside the tlsql executable; else (libtlsql loaded into python or sqlite3) beside libtlsql.so
  // (a build folder) or in ../bin from it (an install).
  std::vector<std::filesystem::path> candidates;
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) candidates.push_back(exe.parent_path() / "tlsql-replay");
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&replay_worker_path), &info) && info.dli_fname) {
    auto lib = std::filesystem::absolute(info.dli_fname, ec).parent_path();
    candidates.push_back(lib / "tlsql-replay");
    candidates.push_back(lib.parent_path() / "bin" / "tlsql-replay");
  }
  for (const auto& c : candidates)
    if (access(c.c_str(), X_OK) == 0) return c.string();
  return candidates.empty() ? "tlsql-replay" : candidates.front().string();
}

bool ReplayClient::start(std::string& why) {
  std::string path = replay_worker_path();
  if (access(path.c_str(), X_OK) != 0) {
    why = fmt::format("replay needs {} (built when LibTorch is found: install libtorch-dev and rebuild)", path);
    return false;
  }
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    why = fmt::format("cannot start the replay worker: {}", strerror(errno));
    return false;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, sv[1], 0);
  posix_spawn_file_actions_adddup2(&fa, sv[1], 1);
  char* argv[] = {const_cast<char*>(path.c_str()), const_cast<char*>("--worker"), nullptr};
  int rc = posix_spawn(&pid_, path.c_str(), &fa, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(sv[1]);
  if (rc != 0) {
    close(sv[0]);
    pid_ = -1;
    why = fmt::format("cannot start {}: {}", path, strerror(rc));
    return false;
  }
  fd_ = sv[0];
  owner_ = getpid();
  struct stat st;
  if (fstat(fd_, &st) == 0) sock_dev_ = st.st_dev, sock_ino_ = st.st_ino;
  buffer_.clear();
  return true;
}

void ReplayClient::stop(bool kill_it) {
  forget_if_inherited();     // never kill or wait for the parent's worker
  if (fd_ >= 0) close(fd_);  // the worker ends at end of input
  fd_ = -1;
  if (pid_ > 0) {
    if (kill_it) kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  pid_ = -1;
  buffer_.clear();
}

std::string ReplayClient::died(const std::string& doing) {
  int status = 0;
  close(fd_);
  fd_ = -1;
  std::string how = "exited";
  if (pid_ > 0 && waitpid(pid_, &status, 0) == pid_) {
    if (WIFSIGNALED(status))
      how = fmt::format("was killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else if (WIFEXITED(status))
      how = fmt::format("exited with status {}", WEXITSTATUS(status));
  }
  pid_ = -1;
  return fmt::format("the replay worker {} while {} (the next replay starts a new one)", how, doing);
}

json ReplayClient::request(const json& req, int timeout_s, const std::function<void(int, int)>& progress) {
  std::lock_guard<std::mutex> lock(mutex_);
  forget_if_inherited();
  std::string why;
  if (fd_ < 0 && !start(why)) return {{"ok", false}, {"error", why}};
  const std::string op = req.value("op", "");
  std::string doing = op == "ir" ? "building the IR of " + req.value("name", std::string("?"))
                      : op == "run" && req.contains("ir") && req["ir"].is_object()
                          ? "running " + req["ir"].value("op_name", std::string("?"))
                          : "answering '" + op + "'";
  std::string line = req.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  for (size_t off = 0; off < line.size();) {
    ssize_t n = send(fd_, line.data() + off, line.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return {{"ok", false}, {"error", died(doing)}};
    off += n;
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  for (;;) {
    size_t nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      json resp = json::parse(buffer_.substr(0, nl), nullptr, false);
      buffer_.erase(0, nl + 1);
      if (resp.is_discarded()) return {{"ok", false}, {"error", "the replay worker answered with bad JSON"}};
      if (resp.is_object() && !resp.contains("ok") && resp.contains("progress")) {  // not the answer yet
        if (progress) progress(resp.value("progress", 0), resp.value("of", 0));
        continue;
      }
      return resp;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      stop(true);
      return {{"ok", false},
              {"error", fmt::format("timed out after {} s while {}; the worker was stopped", timeout_s, doing)}};
    }
    pollfd p{fd_, POLLIN, 0};
    int r = poll(&p, 1, (int)std::min<int64_t>(left.count(), 1000));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    char buf[65536];
    ssize_t n = recv(fd_, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return {{"ok", false}, {"error", died(doing)}};
    buffer_.append(buf, n);
  }
}

}  // namespace tlsql
