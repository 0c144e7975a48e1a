// The tree stage across threads (issue 51): the row ranges a pass is cut into, and the tree
// built from random traces with many threads and tiny ranges against the one a single thread
// builds (the fields the tree stage writes in every row, the children lists, the launches and
// every health row).
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "src/event_store.h"
#include "src/health.h"
#include "src/parallel.h"
#include "src/readers/pipeline.h"
#include "src/tree_builder.h"

using namespace tlsql;

TEST_CASE("row ranges: every row in exactly one range, in order; joined parts are the serial pass's list") {
  std::mt19937 rng(51);
  for (int round = 0; round < 300; ++round) {
    const size_t n = rng() % 2000, threads = 1 + rng() % 12, min_rows = rng() % 50;
    CAPTURE(n);
    CAPTURE(threads);
    CAPTURE(min_rows);
    const RowRanges r = split_rows(n, threads, min_rows);
    CHECK(r.parts >= 1);
    CHECK(r.parts <= threads);
    if (min_rows && r.parts > 1) CHECK(n / r.parts >= min_rows);
    CHECK(r.begin(0) == 0);
    CHECK(r.end(r.parts - 1) == n);
    for (size_t p = 1; p < r.parts; ++p) CHECK(r.begin(p) == r.end(p - 1));
    // A pass that picks rows by a rule: per range, then joined, against one walk in order.
    std::vector<int> keep(n);
    for (int& k : keep) k = (int)(rng() % 3 == 0);
    std::vector<std::vector<size_t>> parts(r.parts);
    std::vector<std::atomic<int>> seen(n);
    for_row_ranges(r, [&](size_t part, size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) {
        seen[i].fetch_add(1);
        if (keep[i]) parts[part].push_back(i);
      }
    });
    std::vector<size_t> serial;
    for (size_t i = 0; i < n; ++i)
      if (keep[i]) serial.push_back(i);
    CHECK(join_parts(parts) == serial);
    for (size_t i = 0; i < n; ++i) REQUIRE(seen[i].load() == 1);
  }
}

TEST_CASE("sort_runs_parallel sorts as std::sort does, in any number of ranges") {
  std::mt19937 rng(11);
  for (int round = 0; round < 200; ++round) {
    const size_t n = rng() % 3000, threads = 1 + rng() % 9, min_rows = rng() % 40;
    CAPTURE(n);
    CAPTURE(threads);
    std::vector<std::pair<int64_t, int32_t>> v;  // (value, distinct row): a total order
    for (size_t i = 0; i < n; ++i) v.push_back({(int64_t)(rng() % 50), (int32_t)i});
    // Nearly in order (a few runs, as a thread's events are), or shuffled whole.
    if (round % 3 == 0) {
      std::shuffle(v.begin(), v.end(), rng);
    } else {
      std::sort(v.begin(), v.end());
      for (int k = 0; k < 4 && n > 1; ++k) std::swap(v[rng() % n], v[rng() % n]);
    }
    std::vector<std::pair<int64_t, int32_t>> want = v;
    std::sort(want.begin(), want.end());
    sort_runs_parallel(v, split_rows(n, threads, min_rows));
    CHECK(v == want);
  }
}

TEST_CASE("for_row_ranges rethrows the first range's error, as one thread would meet it") {
  const RowRanges r{100, 5};
  CHECK_THROWS_WITH(for_row_ranges(r,
                                   [&](size_t part, size_t, size_t) {
                                     if (part >= 2) throw std::runtime_error(fmt::format("part {}", part));
                                   }),
                    "part 2");
  int order = 0;
  CHECK_THROWS_WITH(run_both(
                        true, [&] { throw std::runtime_error("a"); },
                        [&] {
                          ++order;
                          throw std::runtime_error("b");
                        }),
                    "a");
  CHECK(order == 1);  // b ran to its end all the same
}

TEST_CASE("health merged from parts is the health one pass adds in order") {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    const int n = 1 + (int)(rng() % 300), parts = 1 + (int)(rng() % 8);
    std::vector<std::pair<int, int>> adds;  // (check, row) in row order
    for (int row = 0; row < n; ++row)
      if (rng() % 4 == 0) adds.emplace_back((int)(rng() % 3), row);
    Health serial, merged;
    serial.add("c1", 5, "from an earlier stage");
    merged.add("c1", 5, "from an earlier stage");
    std::vector<Health> part_health((size_t)parts);
    for (auto [check, row] : adds) {
      const std::string name = fmt::format("c{}", check);
      serial.add(name, row, "detail");
      part_health[(size_t)(row * parts / n)].add(name, row, "detail");
    }
    for (const Health& h : part_health) merged.merge(h);
    REQUIRE(serial.rows().size() == merged.rows().size());
    for (const auto& [check, row] : serial.rows()) {
      const Health::Row& m = merged.rows().at(check);
      CHECK(m.count == row.count);
      CHECK(m.example == row.example);
      CHECK(m.detail == row.detail);
      CHECK(m.gpu_events == row.gpu_events);
    }
  }
}

namespace {

// A random Kineto trace that exercises every pass of the tree stage: host events on several
// threads and processes (nested, partially overlapping, overrunning by less than 1 µs, B/E pairs
// with and without partners), ProfilerStep annotations, runtime calls and their kernels (shared
// and missing correlations), ac2g flows, forward / backward ops by sequence number and fwdbwd
// flows, and roots on secondary threads.
std::string random_trace(std::mt19937& rng) {
  auto pick = [&](int n) { return (int)(rng() % (uint32_t)n); };
  std::vector<std::string> events;
  const int ops = 50 + pick(400);
  int corr = 1;
  for (int k = 0; k < ops; ++k) {
    const int pid = 1 + pick(2), tid = pick(3) == 0 ? pid : pid * 10 + pick(3);
    const double ts = pick(5000) + (pick(4) == 0 ? 0.5 : 0.0), dur = pick(5) == 0 ? 0.4 : pick(600);
    switch (pick(9)) {
      case 0:
        events.push_back(fmt::format(
            R"({{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{}","pid":{},"tid":{},"ts":{},"dur":{}}})",
            pick(4), pid, pid, ts, dur * 3));
        break;
      case 1:
        events.push_back(
            fmt::format(R"({{"ph":"X","cat":"user_annotation","name":"ann{}","pid":{},"tid":{},"ts":{},"dur":{}}})",
                        pick(3), pid, tid, ts, dur));
        break;
      case 2: {
        const bool bwd = pick(2);
        events.push_back(
            fmt::format(R"({{"ph":"X","cat":"cpu_op","name":"aten::op{}","pid":{},"tid":{},"ts":{},"dur":{},)"
                        R"("args":{{"Sequence number":{},"Fwd thread id":{}}}}})",
                        pick(5), pid, tid, ts, dur, pick(40), bwd ? 1 : 0));
        if (pick(4) == 0) {
          const int id = pick(30);
          events.push_back(
              fmt::format(R"({{"ph":"{}","cat":"fwdbwd","name":"fwdbwd","id":{},"pid":{},"tid":{},"ts":{}}})",
                          bwd ? "f" : "s", id, pid, tid, ts));
        }
        break;
      }
      case 3:
        events.push_back(
            fmt::format(R"({{"ph":"X","cat":"python_function","name":"py{}","pid":{},"tid":{},"ts":{},"dur":{}}})",
                        pick(3), pid, tid, ts, dur));
        break;
      case 4:
        events.push_back(fmt::format(R"({{"ph":"B","cat":"cpu_op","name":"b{}","pid":{},"tid":{},"ts":{}}})", pick(3),
                                     pid, tid, ts));
        if (pick(5)) events.push_back(fmt::format(R"({{"ph":"E","pid":{},"tid":{},"ts":{}}})", pid, tid, ts + dur));
        break;
      case 5:
        if (pick(10) == 0) events.push_back(fmt::format(R"({{"ph":"E","pid":{},"tid":{},"ts":{}}})", pid, tid, ts));
        [[fallthrough]];
      default: {
        // A launch and its kernel: the correlation sometimes shared, sometimes missing on one side;
        // some linked only by an ac2g flow.
        const int c = pick(8) == 0 && corr > 1 ? corr - 1 : corr++;
        const bool graph = pick(6) == 0, flow_only = pick(8) == 0;
        const int launch_ts = (int)ts;
        if (pick(12))
          events.push_back(fmt::format(
              R"({{"ph":"X","cat":"cuda_runtime","name":"{}","pid":{},"tid":{},"ts":{},"dur":5,)"
              R"("args":{{"correlation":{}}}}})",
              graph ? "cudaGraphLaunch" : "cudaLaunchKernel", pid, tid, launch_ts, flow_only ? 100000 + c : c));
        const int kernels = graph ? 1 + pick(3) : 1;
        for (int g = 0; g < kernels; ++g) {
          const int kts = launch_ts + 10 + g * 7 + pick(3);
          events.push_back(fmt::format(R"({{"ph":"X","cat":"kernel","name":"k{}","pid":0,"tid":{},"ts":{},"dur":{},)"
                                       R"("args":{{"correlation":{},"stream":{},"device":0}}}})",
                                       pick(4), 7 + pick(2), kts, 1 + pick(20), c, 7));
          if (flow_only && g == 0) {
            events.push_back(fmt::format(R"({{"ph":"s","cat":"ac2g","name":"ac2g","id":{},"pid":{},"tid":{},"ts":{}}})",
                                         c, pid, tid, launch_ts));
            if (pick(6))
              events.push_back(fmt::format(
                  R"({{"ph":"f","bp":"e","cat":"ac2g","name":"ac2g","id":{},"pid":0,"tid":{},"ts":{}}})", c, 7, kts));
          }
        }
      }
    }
  }
  std::shuffle(events.begin(), events.end(), rng);
  // Mostly in time order, as real traces are, with some rows out of place.
  if (pick(2)) {
    auto ts_of = [](const std::string& e) {
      auto at = e.find("\"ts\":");
      return std::stod(e.substr(at + 5));
    };
    std::stable_sort(events.begin(), events.end(),
                     [&](const std::string& a, const std::string& b) { return ts_of(a) < ts_of(b); });
    for (int k = 0; k < 5 && events.size() > 2; ++k)
      std::swap(events[rng() % events.size()], events[rng() % events.size()]);
  }
  std::string text = R"({"traceEvents":[)";
  for (size_t k = 0; k < events.size(); ++k) text += (k ? "," : "") + events[k];
  return text + "]}";
}

struct Built {
  std::vector<EventRec> rows;
  std::vector<LaunchLink> launches;
  std::vector<uint32_t> child_start, children;
  std::map<std::string, Health::Row> health;
};

Built build(const std::string& path, size_t threads, size_t min_rows) {
  EventStore store;
  Health health;
  LoadStats st;
  LoadOptions opt;
  opt.threads = 1;
  std::unique_ptr<LoadedTrace> trace = read_trace(store, path, opt, health, st);
  ProfileTreeBuilder tree(*trace, store.strings, health, &store.args);
  tree.set_threads(threads, min_rows);
  tree.build();
  Built b;
  for (size_t i = 0; i < trace->rows.size(); ++i) b.rows.push_back(trace->rows[i]);
  b.launches = tree.launches();
  b.child_start = trace->child_start;
  b.children = trace->children;
  b.health = health.rows();
  return b;
}

}  // namespace

TEST_CASE("tree stage: many threads and tiny row ranges build what one thread builds, on random traces") {
  std::mt19937 rng(2026);
  const std::string path = fmt::format("/tmp/tlsql-tree-threads-{}.json", getpid());
  for (int round = 0; round < 60; ++round) {
    CAPTURE(round);
    std::ofstream(path, std::ios::binary) << random_trace(rng);
    const Built one = build(path, 1, ProfileTreeBuilder::kMinRowsPerThread);
    const size_t threads = 2 + rng() % 7, min_rows = 1 + rng() % 20;
    CAPTURE(threads);
    CAPTURE(min_rows);
    const Built many = build(path, threads, min_rows);
    REQUIRE(one.rows.size() == many.rows.size());
    for (size_t i = 0; i < one.rows.size(); ++i) {
      CAPTURE(i);
      const EventRec &a = one.rows[i], &b = many.rows[i];
      REQUIRE(a.parent == b.parent);
      REQUIRE(a.depth == b.depth);
      REQUIRE(a.step == b.step);
      REQUIRE(a.fwd == b.fwd);
      REQUIRE(a.ts == b.ts);
      REQUIRE(a.dur == b.dur);
      REQUIRE(a.kind == b.kind);
      REQUIRE(a.name == b.name);
      REQUIRE(a.pid == b.pid);
      REQUIRE(a.tid == b.tid);
    }
    CHECK(one.child_start == many.child_start);
    CHECK(one.children == many.children);
    REQUIRE(one.launches.size() == many.launches.size());
    for (size_t k = 0; k < one.launches.size(); ++k) {
      CHECK(one.launches[k].gpu == many.launches[k].gpu);
      CHECK(one.launches[k].runtime == many.launches[k].runtime);
      CHECK(one.launches[k].launcher == many.launches[k].launcher);
    }
    REQUIRE(one.health.size() == many.health.size());
    for (const auto& [check, row] : one.health) {
      CAPTURE(check);
      REQUIRE(many.health.count(check));
      const Health::Row& m = many.health.at(check);
      CHECK(m.count == row.count);
      CHECK(m.example == row.example);
      CHECK(m.detail == row.detail);
      CHECK(m.gpu_events == row.gpu_events);
    }
  }
  std::remove(path.c_str());
}

TEST_CASE("tree stage: the random traces reach the passes they are meant to test") {
  // Without this, a generator that stopped making some shape would leave its pass untested.
  std::mt19937 rng(2026);
  const std::string path = fmt::format("/tmp/tlsql-tree-threads-cover-{}.json", getpid());
  std::map<std::string, int> seen;
  int linked = 0, stepped = 0, with_fwd = 0, nested = 0;
  for (int round = 0; round < 20; ++round) {
    std::ofstream(path, std::ios::binary) << random_trace(rng);
    const Built b = build(path, 4, 1);
    for (const auto& [check, row] : b.health) ++seen[check];
    linked += !b.launches.empty();
    for (const EventRec& e : b.rows) {
      stepped += e.step != EventRec::kNull32;
      with_fwd += e.fwd >= 0;
      nested += e.depth >= 2;
    }
  }
  std::remove(path.c_str());
  for (const char* check :
       {"nested_rounded_end", "overlap_not_nested", "backward_without_forward", "gpu_without_launch",
        "duplicate_correlation", "gpu_linked_by_flow", "end_without_begin", "begin_without_end"})
    CHECK_MESSAGE(seen[check] > 0, check);
  CHECK(linked > 0);
  CHECK(stepped > 0);
  CHECK(with_fwd > 0);
  CHECK(nested > 0);
}
