// Runs one replay IR through LibTorch's dispatcher and times it.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tlsql::replay {

struct RunOptions {
  std::string device;  // "cuda", "cpu", or "" for cuda when LibTorch has a GPU
  int warmup = 10, iters = 100;
  // Called after each call of the op: (calls done, warmup + iters).
  std::function<void(int, int)> progress;
};

struct RunResult {
  bool ok = false;
  std::string error, device, timer;  // timer: "cuda events", "cuda sync", "steady clock"
  double mean_us = 0, median_us = 0, min_us = 0;
  std::vector<std::vector<int64_t>> output_shapes;
};

RunResult run_ir(const nlohmann::json& ir, const RunOptions& opt);

// The device run_ir uses when RunOptions::device is "": cuda when this LibTorch has a GPU, else cpu.
std::string default_device();

// Human-readable argument lines as tlsql-replay prints them ("  input Tensor: {'shape': ...}").
std::string describe_ir(const nlohmann::json& ir);

}  // namespace tlsql::replay
