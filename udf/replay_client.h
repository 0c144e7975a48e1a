// Talks to the replay worker (tlsql-replay --worker), the only process that loads LibTorch. It is
// started on the first request and reused; if it dies (a segfault, an abort, out of memory in an
// op) the request gets that as its error and the next request starts a fresh worker.
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
  ReplayClient() = default;
  bool start(std::string& why);
  void stop(bool kill_it);
  std::string died(const std::string& doing);

  std::mutex mutex_;
  pid_t pid_ = -1;
  int fd_ = -1;
  std::string buffer_;
};

// The worker binary: $TLSQL_REPLAY_WORKER, else tlsql-replay beside the running executable.
std::string replay_worker_path();

}  // namespace tlsql
