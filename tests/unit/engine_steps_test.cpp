// The engine steps' rules (udf/analysis/engine_steps.h) on hand-made rows; each expected number is worked
// out next to its trace.
#include "udf/analysis/engine_steps.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using tlsql::EngineStep;
using tlsql::Kind;
using tlsql::kNull;
using tlsql::StepRows;
using tlsql::ThreadKey;

namespace {

constexpr ThreadKey kMain{1, 1, 0}, kOther{1, 2, 0}, kStream{0, 7, 0};

// The members of step j, by row.
std::vector<size_t> members(const tlsql::EngineSteps& s, int32_t j) {
  std::vector<size_t> out;
  for (size_t i = 0; i < s.member.size(); ++i)
    if (s.member[i] == j) out.push_back(i);
  return out;
}

}  // namespace

TEST_CASE("step names: serving annotations and frames, graph launches, GPU waits, ProfilerStep#N") {
  using tlsql::StepName;
  CHECK(StepName("execute_4_context_0()_generation_4()").annotation);
  CHECK(!StepName("execute_4_context_0()_generation_4()").frame);
  CHECK(StepName("vllm/v1/worker/gpu_worker.py(263): execute_model").frame);
  CHECK(StepName("cudaGraphLaunch").graph_launch);
  CHECK(StepName("hipGraphLaunch").graph_launch);
  CHECK(StepName("cudaStreamSynchronize").gpu_wait);
  CHECK(!StepName("cudaMemcpyAsync").gpu_wait);
  CHECK(StepName("ProfilerStep#12").profiler_step == 12);
  CHECK(StepName("ProfilerStep#0").profiler_step == 0);
  // As the step column writes N, nothing else: 'ProfilerStep#' || step.
  CHECK(StepName("ProfilerStep#012").profiler_step == kNull);
  CHECK(StepName("ProfilerStep#12 ").profiler_step == kNull);
  CHECK(StepName("ProfilerStep#").profiler_step == kNull);
  CHECK(StepName("ProfilerStep#+1").profiler_step == kNull);
}

TEST_CASE("annotation steps: the outermost, their subtrees, GPU busy, span, kernels and graph launches") {
  // ns. Step A [0, 100): an op launching k1 [10, 30) and k2 [20, 50) (overlapping: busy 40, span 40),
  // a memcpy [60, 70) (busy, not a kernel), and a graph launch replaying g1 [200, 260) (the GPU runs
  // behind the host: span 10..260 = 250, busy 40 + 10 + 60 = 110). Inside A, an annotation of the
  // same kind (a nested step: part of A). Step B [300, 400): nothing on the GPU. A worker frame
  // around both is not a step: the trace has annotations.
  StepRows r;
  r.add(100, -1, 0, Kind::python, "vllm/v1/worker/gpu_worker.py(263): execute_model", 0, 500, kMain);         // 0
  r.add(101, 0, 0, Kind::annotation, "execute_4_context_0()_generation_4()", 0, 100, kMain);                  // 1
  r.add(102, 1, 0, Kind::cpu_op, "aten::mm", 5, 40, kMain);                                                   // 2
  r.add(103, 2, 0, Kind::runtime, "cudaLaunchKernel", 6, 8, kMain);                                           // 3
  r.add(104, 3, 0, Kind::kernel, "k1", 10, 30, kStream);                                                      // 4
  r.add(105, 2, 0, Kind::runtime, "cudaLaunchKernel", 9, 11, kMain);                                          // 5
  r.add(106, 5, 0, Kind::kernel, "k2", 20, 50, kStream);                                                      // 6
  r.add(107, 1, 0, Kind::annotation, "execute_1_context_1(sq1sk1sqsq1sqsk1)_generation_0()", 50, 90, kMain);  // 7
  r.add(108, 7, 0, Kind::runtime, "cudaMemcpyAsync", 55, 57, kMain);                                          // 8
  r.add(109, 8, 0, Kind::memcpy, "Memcpy HtoD", 60, 70, kStream);                                             // 9
  r.add(110, 1, 0, Kind::runtime, "cudaGraphLaunch", 80, 85, kMain);                                          // 10
  r.add(111, 10, 0, Kind::kernel, "g1", 200, 260, kStream);                                                   // 11
  r.add(112, 0, 0, Kind::annotation, "execute_8_context_2()_generation_0()", 300, 400, kMain);                // 12
  r.add(113, -1, 0, Kind::kernel, "stray", 450, 460, kStream);  // 13: no launch in a step
  const auto s = tlsql::find_engine_steps(r);
  REQUIRE(s.error.empty());
  REQUIRE(s.steps.size() == 2);
  const EngineStep &a = s.steps[0], &b = s.steps[1];
  CHECK(a.uid == 101);
  CHECK(a.iteration == 0);
  CHECK(a.source == EngineStep::annotation);
  CHECK(std::string(a.phase) == "decode");
  CHECK(a.tokens == 4);
  CHECK(a.gpu_busy == 110);
  CHECK(a.gpu_start == 10);
  CHECK(a.gpu_end == 260);
  CHECK(a.kernels == 3);  // k1, k2, g1 (not the memcpy)
  CHECK(a.graph_replays == 1);
  CHECK(members(s, 0) == std::vector<size_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  CHECK(b.uid == 112);
  CHECK(b.iteration == 1);
  CHECK(std::string(b.phase) == "prefill");
  CHECK(b.gpu_busy == 0);
  CHECK(b.gpu_start == kNull);
  CHECK(b.kernels == 0);
  CHECK(members(s, 1) == std::vector<size_t>{12});
  CHECK(s.gpu == std::vector<std::pair<uint32_t, int32_t>>{{4, 0}, {6, 0}, {9, 0}, {11, 0}});
}

TEST_CASE("frames where a trace has no annotations, per trace; numbered by start, then uid") {
  // Trace 0 has an annotation step: its frames are not steps. Trace 1 has frames only: two
  // outermost worker frames (the second starts first: iteration 0), one nested in the first.
  StepRows r;
  r.add(1, -1, 0, Kind::annotation, "step[DECODE bs=2]", 0, 10, kMain);
  r.add(2, -1, 0, Kind::python, "vllm/v1/worker/gpu_worker.py(263): execute_model", 20, 30, kMain);
  r.add(3, -1, 1, Kind::python, "vllm/worker/worker_base.py(393): execute_model", 50, 90, kMain);  // 2
  r.add(4, 2, 1, Kind::python, "vllm/worker/worker_base.py(393): execute_model", 55, 60, kMain);   // 3: nested
  r.add(5, -1, 1, Kind::python, "sglang/srt/managers/tp_worker.py(40): forward_batch_generation", 40, 45, kMain);
  const auto s = tlsql::find_engine_steps(r);
  REQUIRE(s.steps.size() == 3);
  CHECK((s.steps[0].trace == 0 && s.steps[0].uid == 1 && s.steps[0].source == EngineStep::annotation));
  CHECK((s.steps[1].trace == 1 && s.steps[1].uid == 5 && s.steps[1].iteration == 0));
  CHECK((s.steps[2].trace == 1 && s.steps[2].uid == 3 && s.steps[2].iteration == 1));
  CHECK(s.steps[2].source == EngineStep::frame);
  CHECK(s.steps[2].phase == nullptr);
  CHECK(!s.steps[2].tokens);
  CHECK(members(s, 2) == std::vector<size_t>{2, 3});
  CHECK(s.member[1] == -1);  // trace 0's frame
}

TEST_CASE("the host loop: a turn from one GPU wait's end to the next's, on threads that launch graphs") {
  // Thread main launches graphs; thread other does not (its waits are nobody's steps).
  //   [0, 10) op -> launch -> k0 [12, 20)
  //   [20, 25) cudaGraphLaunch -> g [30, 50), g [50, 55) (its kernels, by launch_link)
  //   [40, 60) cudaStreamSynchronize: ends turn 0 at 60 (turn 0: ts 0 .. 60)
  //   [60, 65) op: starts at the wait's end: turn 1's
  //   [70, 90) cudaDeviceSynchronize: ends turn 1 (ts 60 .. 90)
  //   [95, 99) op: after the last wait, no turn
  StepRows r;
  r.add(10, -1, 0, Kind::cpu_op, "aten::mm", 0, 10, kMain);                 // 0
  r.add(11, 0, 0, Kind::runtime, "cudaLaunchKernel", 2, 4, kMain);          // 1
  r.add(12, 1, 0, Kind::kernel, "k0", 12, 20, kStream);                     // 2
  r.add(13, -1, 0, Kind::runtime, "cudaGraphLaunch", 20, 25, kMain);        // 3
  r.add(14, 3, 0, Kind::kernel, "g", 30, 50, kStream);                      // 4
  r.add(15, 3, 0, Kind::kernel, "g", 50, 55, kStream);                      // 5
  r.add(16, -1, 0, Kind::runtime, "cudaStreamSynchronize", 40, 60, kMain);  // 6
  r.add(17, -1, 0, Kind::cpu_op, "aten::add", 60, 65, kMain);               // 7
  r.add(18, -1, 0, Kind::runtime, "cudaDeviceSynchronize", 70, 90, kMain);  // 8
  r.add(19, -1, 0, Kind::cpu_op, "aten::sub", 95, 99, kMain);               // 9
  r.add(20, -1, 0, Kind::runtime, "cudaStreamSynchronize", 5, 8, kOther);   // 10
  r.link(2, 1), r.link(4, 3), r.link(5, 3);
  const auto s = tlsql::find_engine_steps(r);
  REQUIRE(s.steps.size() == 2);
  CHECK((s.steps[0].uid == 16 && s.steps[0].ts == 0 && s.steps[0].end == 60));
  CHECK((s.steps[1].uid == 18 && s.steps[1].ts == 60 && s.steps[1].end == 90));
  CHECK(s.steps[0].source == EngineStep::loop);
  CHECK(members(s, 0) == std::vector<size_t>{0, 1, 3, 6});
  CHECK(members(s, 1) == std::vector<size_t>{7, 8});
  // Turn 0's GPU work: k0 [12, 20), g [30, 55): busy 8 + 25 = 33, span 12 .. 55, 3 kernels, 1 replay.
  CHECK(s.steps[0].gpu_busy == 33);
  CHECK(s.steps[0].gpu_start == 12);
  CHECK(s.steps[0].gpu_end == 55);
  CHECK(s.steps[0].kernels == 3);
  CHECK(s.steps[0].graph_replays == 1);
  CHECK(s.steps[1].kernels == 0);
  const auto loop = tlsql::loop_rows(r);
  std::vector<std::tuple<uint32_t, int64_t, int64_t, bool>> got;
  for (const auto& l : loop) got.emplace_back(l.row, l.k, l.step, l.wait);
  CHECK(got == std::vector<std::tuple<uint32_t, int64_t, int64_t, bool>>{{0, 0, 6, false},
                                                                         {1, 0, 6, false},
                                                                         {3, 0, 6, false},
                                                                         {6, 0, 6, true},
                                                                         {7, 1, 8, false},
                                                                         {8, 1, 8, true},
                                                                         {9, 2, -1, false}});
}

TEST_CASE("a trace with no serving step: its ProfilerSteps, numbered N, with the GPU work of step N") {
  // Trace 0 (training): ProfilerStep#3 [0, 100) and #4 [100, 150); the loader's step column: each
  // launch's step, its kernel's its launch's. Step 3: kernels [10, 30) and [20, 40): busy 30, span
  // 10 .. 40; a graph launch. Step 4: a memset [120, 125) (busy 5, no kernel). "ProfilerStep#04"
  // is no step (not how N is written). Trace 1 has a serving step: its ProfilerStep is not listed.
  StepRows r;
  r.add(1, -1, 0, Kind::annotation, "ProfilerStep#3", 0, 100, kMain, 3);                       // 0
  r.add(2, 0, 0, Kind::runtime, "cudaLaunchKernel", 5, 6, kMain, 3);                           // 1
  r.add(3, 1, 0, Kind::kernel, "k", 10, 30, kStream, 3);                                       // 2
  r.add(4, 0, 0, Kind::runtime, "cudaGraphLaunch", 7, 8, kMain, 3);                            // 3
  r.add(5, 3, 0, Kind::kernel, "g", 20, 40, kStream, 3);                                       // 4
  r.add(6, -1, 0, Kind::cpu_op, "ProfilerStep#4", 100, 150, kMain, 4);                         // 5
  r.add(7, 5, 0, Kind::runtime, "cudaMemsetAsync", 101, 102, kMain, 4);                        // 6
  r.add(8, 6, 0, Kind::memset, "Memset", 120, 125, kStream, 4);                                // 7
  r.add(9, -1, 0, Kind::annotation, "ProfilerStep#04", 150, 160, kMain, 4);                    // 8
  r.add(10, -1, 1, Kind::annotation, "ProfilerStep#1", 0, 50, kMain, 1);                       // 9
  r.add(11, 9, 1, Kind::annotation, "execute_1_context_1()_generation_0()", 1, 40, kMain, 1);  // 10
  const auto s = tlsql::find_engine_steps(r);
  REQUIRE(s.steps.size() == 3);
  const EngineStep &p3 = s.steps[0], &p4 = s.steps[1];
  CHECK((p3.trace == 0 && p3.iteration == 3 && p3.uid == 1 && p3.source == EngineStep::profiler_step));
  CHECK((p3.gpu_busy == 30 && p3.gpu_start == 10 && p3.gpu_end == 40 && p3.kernels == 2 && p3.graph_replays == 1));
  CHECK((p4.iteration == 4 && p4.uid == 6 && p4.gpu_busy == 5 && p4.kernels == 0 && p4.graph_replays == 0));
  CHECK((s.steps[2].trace == 1 && s.steps[2].source == EngineStep::annotation && s.steps[2].iteration == 0));
  // ProfilerSteps have no members: only serving steps do (engine_step_member).
  CHECK(members(s, 0).empty());
  CHECK(members(s, 2) == std::vector<size_t>{10});
}

TEST_CASE("ProfilerSteps sharing a number: each gets the GPU work launched in it, in linear time") {
  // Three ProfilerStep#10 in one trace (scale_trace.py's copies all say #10): [0, 100), [100, 200)
  // and [200, 300). Each launches one kernel at ts + 5 running [ts + 10, ts + 10 + 10 * (c + 1)):
  // busy 10, 20 and 30 ns, one kernel each. Copy 1 also launches a graph. The loader gives every row
  // step 10; the step a row belongs to is the latest-started #10 at or before its (launch's) start.
  StepRows r;
  for (int64_t c = 0; c < 3; ++c) {
    const int64_t ts = 100 * c, row = (int64_t)r.size();
    r.add(1 + row, -1, 0, Kind::annotation, "ProfilerStep#10", ts, ts + 100, kMain, 10);
    r.add(2 + row, row, 0, Kind::runtime, "cudaLaunchKernel", ts + 5, ts + 6, kMain, 10);
    r.add(3 + row, row + 1, 0, Kind::kernel, "k", ts + 10, ts + 10 + 10 * (c + 1), kStream, 10);
    if (c == 1) r.add(4 + row, row, 0, Kind::runtime, "cudaGraphLaunch", ts + 50, ts + 51, kMain, 10);
  }
  const auto s = tlsql::find_engine_steps(r);
  REQUIRE(s.steps.size() == 3);
  for (int64_t c = 0; c < 3; ++c) {
    const EngineStep& p = s.steps[(size_t)c];
    CAPTURE(c);
    CHECK((p.iteration == 10 && p.ts == 100 * c && p.source == EngineStep::profiler_step));
    CHECK((p.kernels == 1 && p.gpu_busy == 10 * (c + 1) && p.gpu_start == 100 * c + 10));
    CHECK(p.graph_replays == (c == 1 ? 1 : 0));
  }

  // 20,000 steps all numbered 10, one kernel each (busy 10): keyed by number alone this was
  // 20,000^2 additions; each step must still see only its own kernel.
  StepRows many;
  constexpr int64_t kCopies = 20000;
  for (int64_t c = 0; c < kCopies; ++c) {
    const int64_t ts = 100 * c, row = (int64_t)many.size();
    many.add(1 + row, -1, 0, Kind::annotation, "ProfilerStep#10", ts, ts + 100, kMain, 10);
    many.add(2 + row, row, 0, Kind::runtime, "cudaLaunchKernel", ts + 5, ts + 6, kMain, 10);
    many.add(3 + row, row + 1, 0, Kind::kernel, "k", ts + 10, ts + 20, kStream, 10);
  }
  const auto m = tlsql::find_engine_steps(many);
  REQUIRE(m.steps.size() == (size_t)kCopies);
  int64_t wrong = 0;
  for (const EngineStep& p : m.steps) wrong += p.kernels != 1 || p.gpu_busy != 10 || p.gpu_start != p.ts + 10;
  CHECK(wrong == 0);
}

TEST_CASE("no steps; parent links that loop; a deep tree") {
  StepRows none;
  none.add(1, -1, 0, Kind::cpu_op, "aten::mm", 0, 10, kMain);
  const auto s = tlsql::find_engine_steps(none);
  CHECK(s.steps.empty());
  CHECK(s.member.empty());
  StepRows loop;
  loop.add(1, 1, 0, Kind::annotation, "execute_1_context_1()_generation_0()", 0, 10, kMain);  // (parent: row 1)
  loop.add(2, 0, 0, Kind::cpu_op, "aten::mm", 1, 2, kMain);
  CHECK(tlsql::find_engine_steps(loop).error.find("loop") != std::string::npos);
  // 200,000 nested ops under one step: no recursion, every op a member.
  StepRows deep;
  deep.add(0, -1, 0, Kind::annotation, "execute_1_context_1()_generation_0()", 0, 1000000, kMain);
  for (int64_t i = 1; i <= 200000; ++i) deep.add(i, i - 1, 0, Kind::cpu_op, "aten::add", i, 1000000 - i, kMain);
  const auto d = tlsql::find_engine_steps(deep);
  REQUIRE(d.steps.size() == 1);
  CHECK(members(d, 0).size() == 200001);
}
