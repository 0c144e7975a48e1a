// Talks to the replay worker (tlsql-replay --worker), the only process that loads LibTorch. It is
// started on the first request and reused; if it dies (a segfault, an abort, out of memory in an
// op) the request gets that as its error and the next request starts a fresh worker.
// A worker belongs to the process that started it: after fork() (Python's os.fork, multiprocessing)
// the child starts its own on its first request and never reads, writes, kills or waits for the
// parent's (they would share one socket, and answers would cross).
#pragma once

#include <sys/types.h>

#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

namespace tlsql {

class ReplayClient {
 public:
  static ReplayClient& instance();
  ~ReplayClient();
  // One request; the worker's response, or {"ok": false, "error": why} when it could not answer.
  // `progress`, when given, sees the worker's progress lines of a run: (calls done, calls in all).
  nlohmann::json request(const nlohmann::json& req, int timeout_s = 600,
                         const std::function<void(int, int)>& progress = nullptr);

 private:
  ReplayClient();
  bool start(std::string& why);
  void stop(bool kill_it);
  // After a fork: drops the parent's worker from this process's view (closes only this process's
  // copy of the socket), so the next request starts this process's own.
  void forget_if_inherited();
  std::string died(const std::string& doing);

  std::mutex mutex_;
  pid_t pid_ = -1;
  pid_t owner_ = -1;  // the process that started pid_ (getpid() then)
  int fd_ = -1;
  dev_t sock_dev_ = 0;  // fd_'s identity, to tell it from a descriptor a forked child reused
  ino_t sock_ino_ = 0;
  std::string buffer_;
};

// The worker binary: $TLSQL_REPLAY_WORKER, else tlsql-replay beside the running executable.
std::string replay_worker_path();

}  // namespace tlsql
