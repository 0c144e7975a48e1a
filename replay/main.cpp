// tlsql-replay: replays exported IR (tlsql's .export-replay or TraceLens's) op by op, or, with
// --worker, serves tlsql's replay() / replay_ir() over stdin / stdout, one JSON object per line.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <new>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>

#include "replay/ir.h"
#include "replay/runner.h"

using nlohmann::json;
using namespace tlsql::replay;

namespace {

// Test-only operators that crash the worker, so tests can check that a session survives.
void maybe_crash(const std::string& name) {
  if (name == "tlsql_test::segfault") std::raise(SIGSEGV);
  if (name == "tlsql_test::abort") std::abort();
}

json run_json(const RunResult& r) {
  if (!r.ok) return {{"ok", false}, {"error", r.error}};
  return {{"ok", true},         {"mean_us", r.mean_us}, {"median_us", r.median_us},        {"min_us", r.min_us},
          {"device", r.device}, {"timer", r.timer},     {"output_shapes", r.output_shapes}};
}

// Deepest nesting of the JSON text (strings skipped), without parsing it: nlohmann's dump() and
// our own walks recurse, so deeply nested input is refused before it is parsed.
size_t nesting(const std::string& t) {
  size_t depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < t.size(); ++i) {
    char c = t[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}
constexpr size_t kMaxNesting = 64;

// One request of the worker protocol; any malformed field is an error answer, never an exception.
json answer(const json& req) {
  if (!req.is_object()) return {{"ok", false}, {"error", "bad request"}};
  const std::string op = req.value("op", "");
  if (op == "ir") {
    std::string why, name = req.value("name", "");
    maybe_crash(name);
    auto ir = build_ir(name, req.value("args", json::object()), why);
    return ir ? json{{"ok", true}, {"ir", *ir}} : json{{"ok", false}, {"error", why}};
  }
  if (op == "device") return {{"ok", true}, {"device", default_device()}};
  if (op == "run") {
    const json ir = req.value("ir", json());
    if (std::string bad = check_ir(ir); !bad.empty()) return {{"ok", false}, {"error", "bad IR: " + bad}};
    maybe_crash(ir.value("op_name", ""));
    RunOptions opt{req.value("device", ""), req.value("warmup", 10), req.value("iters", 100), nullptr};
    // Progress lines before the answer (the client shows them during long replays): after the
    // first call, then at most one a second.
    auto last = std::chrono::steady_clock::time_point{};
    opt.progress = [&](int done, int total) {
      const auto now = std::chrono::steady_clock::now();
      if (done > 1 && now - last < std::chrono::seconds(1)) return;
      last = now;
      std::cout << json{{"progress", done}, {"of", total}}.dump() << "\n" << std::flush;
    };
    json resp = run_json(run_ir(ir, opt));
    if (resp["ok"]) resp["arguments"] = describe_ir(ir);
    return resp;
  }
  return {{"ok", false}, {"error", "unknown request"}};
}

int worker() {
  // The worker dies with the process that started it, even in the middle of a long replay (when
  // it reads no input, so the socket's end says nothing). Not PR_SET_PDEATHSIG: Linux sends that
  // when the *thread* that spawned the worker exits, and a host may start it from a short-lived
  // thread (Python's sqlite3 in a concurrent.futures pool) and replay from another later. A
  // watcher sees the process go instead: once it is gone the worker is re-parented (getppid()
  // changes), checked 4 times a second. (A parent gone before this line leaves the worker reading
  // a closed socket: it ends at the end of its input.)
  const pid_t parent = getppid();
  std::thread([parent] {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
      if (getppid() != parent) _exit(137);
    }
  }).detach();
  std::string line;
  while (std::getline(std::cin, line)) {
    json resp;
    try {
      if (nesting(line) > kMaxNesting) throw std::runtime_error("request nested too deeply");
      json req = json::parse(line, nullptr, false);
      resp = req.is_discarded() ? json{{"ok", false}, {"error", "bad request"}} : answer(req);
    } catch (const std::bad_alloc&) {
      resp = {{"ok", false}, {"error", "out of memory while answering the request"}};
    } catch (const std::exception& e) {
      resp = {{"ok", false}, {"error", std::string("bad request: ") + e.what()}};
    }
    std::cout << resp.dump(-1, ' ', false, json::error_handler_t::replace) << "\n" << std::flush;
  }
  return 0;
}

// The ops of an IR file: a list of {op_name, replay_ir[, count]} (tlsql, TraceLens), or an object
// of them keyed by uid.
std::vector<json> read_ops(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open");
  std::stringstream read;
  read << in.rdbuf();
  const std::string text = std::move(read).str();  // (one copy of the file, not one per use)
  if (nesting(text) > kMaxNesting)
    throw std::runtime_error(path + ": nested deeper than " + std::to_string(kMaxNesting) + " levels: not replay IR");
  // Each op is taken out of the tree as soon as it is parsed, into a value of its own: destroying
  // one nlohmann value allocates a stack as long as its widest container (json_value::destroy), so
  // a bundle of 300,000 ops held as one array aborted in its noexcept destructor when a bad_alloc
  // (a memory cap) unwound through it; a value per op needs a few entries.
  // Ops are the values at depth 1 (a list, or an object keyed by uid) or, under "ops", at depth 2.
  std::vector<json> listed, keyed;  // under "ops"; at depth 1
  bool in_ops = false, has_ops = false, top_object = false;
  json::parser_callback_t take = [&](int depth, json::parse_event_t event, json& parsed) {
    if (depth == 0 && event == json::parse_event_t::object_start) top_object = true;
    if (top_object && depth == 1 && event == json::parse_event_t::key) {
      in_ops = parsed == "ops";
      has_ops = has_ops || in_ops;
    }
    const bool done = event == json::parse_event_t::value || event == json::parse_event_t::object_end ||
                      event == json::parse_event_t::array_end;
    if (!done || (depth != 1 && !(depth == 2 && in_ops))) return true;
    if (depth == 1 && in_ops) return true;  // the "ops" container itself: its elements were taken
    (depth == 1 ? keyed : listed).push_back(std::move(parsed));
    return false;
  };
  json j = json::parse(text, take, false);
  if (j.is_discarded()) throw std::runtime_error(path + ": not valid JSON");
  std::vector<json> ops = std::move(has_ops ? listed : keyed);
  if (has_ops && !j["ops"].is_array() && !j["ops"].is_object())
    throw std::runtime_error(path + ": expected a list of {\"op_name\", \"replay_ir\"} objects");
  if (!j.is_array() && !j.is_object())
    throw std::runtime_error(path + ": expected a list of {\"op_name\", \"replay_ir\"} objects");
  for (size_t i = 0; i < ops.size(); ++i)
    if (std::string bad = check_ir(ops[i]); !bad.empty())
      throw std::runtime_error(path + ": entry " + std::to_string(i + 1) + ": " + bad);
  return ops;
}

}  // namespace

int replay_main(int argc, char** argv) {
  CLI::App app{"Replay PyTorch ops from tlsql / TraceLens replay IR, each alone, and time them."};
  std::string file, device, filter;
  int iters = 100, warmup = 10, limit = -1;
  bool serve = false;
  app.add_option("FILE", file, "IR file (.export-replay output or TraceLens's event replay JSON)");
  app.add_option("--device", device, "cuda or cpu (default: cuda when LibTorch has a GPU)")
      ->check(CLI::IsMember({"cuda", "cpu"}));
  app.add_option("--iters", iters, "timed iterations per op")->check(CLI::PositiveNumber);
  app.add_option("--warmup", warmup, "untimed iterations first")->check(CLI::NonNegativeNumber);
  app.add_option("--filter", filter, "only ops whose name matches this regular expression");
  app.add_option("--limit", limit, "replay at most N ops");
  app.add_flag("--worker", serve, "serve tlsql's replay requests on stdin / stdout");
  CLI11_PARSE(app, argc, argv);
  if (serve) return worker();
  if (file.empty()) {
    std::cerr << "tlsql-replay: error: FILE is required (see --help)\n";
    return 2;
  }
  std::vector<json> ops;
  std::regex re;
  try {
    ops = read_ops(file);
    if (!filter.empty()) re = std::regex(filter);
  } catch (const std::bad_alloc&) {
    std::cerr << "tlsql-replay: error: out of memory while reading " << file << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "tlsql-replay: error: " << e.what() << "\n";
    return 1;
  }
  int total = (int)ops.size(), attempted = 0, ok = 0;
  for (int i = 0; i < total; ++i) {
    std::string name = ops[i].value("op_name", "");
    if (!filter.empty() && !std::regex_search(name, re)) continue;
    if (limit >= 0 && attempted >= limit) break;
    ++attempted;
    std::cout << "[" << i + 1 << "/" << total << "] Replaying: " << name << "\n" << describe_ir(ops[i]);
    RunResult r;
    try {
      r = run_ir(ops[i], RunOptions{device, warmup, iters, nullptr});
    } catch (const std::bad_alloc&) {  // (a tensor the IR asks for past the memory there is)
      r.ok = false, r.error = "out of memory while replaying it";
    } catch (const std::exception& e) {  // run_ir catches LibTorch's errors; this is a last guard
      r.ok = false, r.error = e.what();
    }
    if (r.ok) {
      ++ok;
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.2f", r.mean_us);
      std::cout << "Average time taken: " << buf << " microseconds\nSuccessfully executed " << name << ".\n";
    } else {
      std::cout << "Error replaying " << name << ": " << r.error << "\n";
    }
    std::cout << std::flush;
  }
  std::cout << "\nSummary: total " << total << ", attempted " << attempted << ", succeeded " << ok << ", errors "
            << attempted - ok << "\n";
  return attempted == ok ? 0 : 1;
}

// A bad_alloc anywhere (a memory or address-space limit reached) is one line and exit 1, never
// std::terminate's abort; so is any other exception the steps above did not say.
int main(int argc, char** argv) {
  try {
    return replay_main(argc, argv);
  } catch (const std::bad_alloc&) {
    std::cerr << "tlsql-replay: error: out of memory\n";
  } catch (const std::exception& e) {
    std::cerr << "tlsql-replay: error: " << e.what() << "\n";
  }
  return 1;
}
