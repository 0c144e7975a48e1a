// replay_ir(uid [, schema]) and replay(uid [, device [, iters]]): the op's TraceLens-format replay
// IR, and its mean time in µs when re-run alone through LibTorch (in the replay worker process).
#pragma once

#include <sqlite3.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace tlsql {

// The IR of event `uid` in `schema`, or nullopt with `why`.
std::optional<nlohmann::json> replay_ir_of(sqlite3* db, const std::string& schema, int64_t uid, std::string& why);

}  // namespace tlsql
