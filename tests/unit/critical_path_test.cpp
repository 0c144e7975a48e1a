// The critical path algorithm on hand-made windows; each expected path is worked out in the
// comments from HTA's rules (hta/analyzers/critical_path_analysis.py).
#include "udf/analysis/critical_path.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using tlsql::CpEdge;
using tlsql::CpGpu;
using tlsql::CpHost;
using tlsql::CpInput;
using tlsql::CpSync;
using tlsql::kKernelKernelGapNs;

namespace {

// An op or call of thread 0 (the walk nests the window's events by time, as HTA's call stack does).
CpHost op(int64_t uid, int64_t ts, int64_t end, bool blocking = false) {
  return CpHost{uid, 0, 0, ts, end, true, blocking, false, false, false};
}
// A call that holds the CUDA runtime's lock (cudaLaunchKernel), of thread `tid`.
CpHost lock_call(int64_t uid, int32_t tid, int64_t ts, int64_t end, bool blocking = false) {
  return CpHost{uid, 0, tid, ts, end, true, blocking, true, false, false};
}
CpHost thread_op(int64_t uid, int32_t tid, int64_t ts, int64_t end) {
  return CpHost{uid, 0, tid, ts, end, true, false, false, false, false};
}
CpGpu kernel(int64_t uid, int64_t runtime, int64_t runtime_ts, int64_t ts, int64_t end, int64_t stream) {
  return CpGpu{uid, runtime, runtime_ts, 0, ts, end, stream, true, false};
}
std::string types(const tlsql::CpResult& r) {
  std::string s;
  for (const auto& x : r.path) s += std::string(tlsql::cp_edge_name(x.type)).substr(14) + " ";
  return s;
}
int64_t total(const tlsql::CpResult& r) {
  int64_t t = 0;
  for (const auto& x : r.path) t += x.weight;
  return t;
}

}  // namespace

TEST_CASE("launch delay, a blocking sync call and the GPU -> CPU edge of a context sync") {
  // Op A [0, 100] holds launch L [10, 20] (kernel K [30, 90], queue empty) and
  // cudaDeviceSynchronize S [25, 95], whose wait ends when K does (Context Sync).
  // Host edges: A.s->L.s 10 (A's), L.s->L.e 10 (L's), L.e->S.s 5 (between children: A's),
  // S.s->S.e 0 (a blocking call weighs nothing), S.e->A.e 5 (A's).
  // GPU: K.s->K.e 60; L.s->K.s launch delay 20 (queue 1 at launch, 0 at start); K.e->S.e sync 0.
  // Longest: A.s -10-> L.s -20-> K.s -60-> K.e -0-> S.e -5-> A.e = 95 (the host chain is 30).
  CpInput in;
  in.host = {op(1, 0, 100), op(2, 10, 20), op(3, 25, 95, true)};
  in.gpu = {kernel(10, 2, 10, 30, 90, 0)};
  CpSync sync{CpSync::context_sync, 11, 30, 94, -1};
  sync.runtime = 3;
  in.sync = {sync};
  auto r = tlsql::critical_path(in);
  REQUIRE(r.error.empty());
  CHECK(types(r) == "operator kernel_launch_delay operator sync_dependency operator ");
  CHECK(total(r) == 95);
  REQUIRE(r.path.size() == 5);
  CHECK(r.path[0].uid == 1);
  CHECK(std::string(r.path[0].bound_by) == "cpu_bound");
  CHECK(r.path[1].uid == -1);  // HTA attributes launch delays to no event
  CHECK(std::string(r.path[1].bound_by) == "gpu_kernel_launch_overhead");
  CHECK(r.path[2].uid == 10);
  CHECK(std::string(r.path[2].bound_by) == "gpu_compute_bound");
  CHECK(std::string(r.path[3].bound_by) == "");
  CHECK(r.path[4].uid == 1);  // S.e -> A.e: an end to an end belongs to the ending event
  CHECK(r.path[4].weight == 5);

  // Without the sync event the path stops at K's end: 10 + 20 + 60.
  in.sync.clear();
  r = tlsql::critical_path(in);
  CHECK(types(r) == "operator kernel_launch_delay operator ");
  CHECK(total(r) == 90);
}

TEST_CASE("kernel-kernel delay on a busy stream") {
  // Launches L1 [0, 5], L2 [6, 11] (top level: a dependency between them), kernels K1 [20, 50],
  // K2 [53, 80] on one stream. K1 starts with L2 queued (queue 1, not 0): no launch delay, and no
  // earlier kernel: no edge into K1. K2 was launched with K1 queued: the gap K1.e -> K2.s is a
  // kernel-kernel delay of 3, attributed to K1. Longest: K1 30 + 3 + K2 27 = 60.
  CpInput in;
  in.host = {op(1, 0, 5), op(2, 6, 11)};
  in.gpu = {kernel(10, 1, 0, 20, 50, 0), kernel(11, 2, 6, 53, 80, 0)};
  auto r = tlsql::critical_path(in);
  REQUIRE(r.error.empty());
  CHECK(types(r) == "operator kernel_kernel_delay operator ");
  CHECK(total(r) == 60);
  REQUIRE(r.path.size() == 3);
  CHECK(r.path[1].uid == 10);
  CHECK(std::string(r.path[1].bound_by) == "gpu_kernel_kernel_overhead");
}

TEST_CASE("a stream waits for an event recorded on another stream") {
  // Thread 0: L1 [0, 5] launches K1 [10, 100] on stream 0; cudaEventRecord at 6 (stream 0);
  // cudaStreamWaitEvent [8, 9] makes stream 1 wait; L2 [10, 15] launches K2 [101, 120] on stream 1.
  // K2 waits for K1 (the launch on stream 0 before the record): sync K1.e -> K2.s, and no launch
  // delay (K1 ended after L2 started). Longest: L1.s -10-> K1.s -90-> K1.e -0-> K2.s -19-> K2.e =
  // 119 (the four top-level calls chain by weightless dependencies: 5 + 1 + 1 + 5 = 12).
  CpInput in;
  in.host = {op(1, 0, 5), op(2, 6, 7), op(3, 8, 9), op(4, 10, 15)};
  in.gpu = {kernel(10, 1, 0, 10, 100, 0), kernel(11, 4, 10, 101, 120, 1)};
  CpSync wait{CpSync::stream_wait, 12, 9, 9, 1};
  wait.runtime = 3, wait.wait_ts = 8, wait.wait_thread = 0, wait.record_ts = 6, wait.record_stream = 0;
  in.sync = {wait};
  auto r = tlsql::critical_path(in);
  REQUIRE(r.error.empty());
  CHECK(types(r) == "kernel_launch_delay operator sync_dependency operator ");
  CHECK(total(r) == 119);

  // Without knowing which record it waits for (older traces), K2 is a plain launch (queue 1, then
  // 0): L2.s -91-> K2.s -19-> K2.e, reached through the host chain L1 (5), the record call (1) and
  // the wait call (1): 5 + 1 + 1 + 91 + 19 = 117 > the K1 chain's 100.
  in.sync[0].record_ts = -1;
  r = tlsql::critical_path(in);
  CHECK(types(r) == "operator dependency operator dependency operator dependency kernel_launch_delay operator ");
  CHECK(total(r) == 117);
}

TEST_CASE("stream waits without a sync event are inferred from the records and launches around them") {
  // Thread 0: op A [0, 30] holds L1 [1, 2] (K1 [10, 50], stream 1), a record at 2, L2 [3, 4] (K2
  // [10, 70], stream 2), a record at 5, L3 [20, 21] (K3 [70, 80], stream 3). Waits W1 at 15 (its
  // record at 2: the thread last launched on stream 1, K1) and W2 at 16 (record at 5: stream 2,
  // K2); the thread's next launch after both is K3 on stream 3: two inferred edges K1.e -> K3.s and
  // K2.e -> K3.s. K3 waited until 70, after L3 launched it: no launch delay. Longest: A.s -1-> L1.s
  // -1-> L1.e -1-> L2.s -7 (launch delay)-> K2.s -60-> K2.e -0-> K3.s -10-> K3.e = 80 (through K1:
  // 1 + 9 + 40 = 50 at K1.e; the host chain: 1 + 1 + 1 + 1 + 16 + 1 + 9 = 30).
  CpInput in;
  in.host = {op(1, 0, 30), op(2, 1, 2), op(3, 3, 4), op(4, 20, 21)};
  in.gpu = {kernel(10, 2, 1, 10, 50, 1), kernel(11, 3, 3, 10, 70, 2), kernel(12, 4, 20, 70, 80, 3)};
  in.waits = {{5, 15, 0, 2}, {6, 16, 0, 5}};
  auto r = tlsql::critical_path(in);
  REQUIRE(r.error.empty());
  CHECK(types(r) == "operator operator operator kernel_launch_delay operator sync_dependency operator ");
  CHECK(total(r) == 80);
  CHECK(r.path[5].inferred);
  CHECK(r.path[5].from_uid == 11);
  CHECK(r.waits.inferred == 2);
  CHECK(r.waits.unplaced.empty());

  // Without the inference (no record before either wait), K3 is a plain launch from L3 (queue 1,
  // then 0): L3.s -50-> K3.s, reached by the host chain 1 + 1 + 1 + 1 + 16 = 20: 20 + 50 + 10 = 80 as
  // well, but through the launch delay; both waits named, none inferred.
  in.waits = {{5, 15, 0, -1}, {6, 16, 0, -1}};
  r = tlsql::critical_path(in);
  CHECK(types(r) == "operator operator operator operator operator kernel_launch_delay operator ");
  CHECK(r.waits.inferred == 0);
  REQUIRE(r.waits.unplaced.size() == 2);
  CHECK(r.waits.unplaced[0].first == 5);
  CHECK(std::string(r.waits.unplaced[0].second) ==
        "no event record (cudaEventRecord, hipEventRecord) before it on its thread");

  // K1 launched before the window (no nodes): W1 cannot be placed, W2 still is.
  in.waits = {{5, 15, 0, 2}, {6, 16, 0, 5}};
  in.gpu[0].in_window = false;
  r = tlsql::critical_path(in);
  CHECK(total(r) == 80);
  CHECK(r.waits.inferred == 1);
  REQUIRE(r.waits.unplaced.size() == 1);
  CHECK(std::string(r.waits.unplaced[0].second) == "the work waited for or the waiting work is outside the window");
}

TEST_CASE("negative weights count as zero; an empty window is an error; deep stacks need no recursion") {
  CpInput in;
  // A child that ends after its parent (clock granularity): S.e -> A.e would be -2.
  in.host = {op(1, 0, 10), op(2, 2, 12)};
  auto r = tlsql::critical_path(in);
  REQUIRE(r.error.empty());
  CHECK(r.negative == 1);
  CHECK(total(r) == 12);  // A.s -2-> B.s -10-> B.e -0-> A.e

  CHECK_FALSE(tlsql::critical_path(CpInput{}).error.empty());

  // 100,000 nested ops, each 1 ns inside its parent at both ends: the path walks down and up.
  CpInput deep;
  const int n = 100000;
  for (int i = 0; i < n; ++i) deep.host.push_back(op(i, i, 2 * n - i));
  r = tlsql::critical_path(deep);
  REQUIRE(r.error.empty());
  CHECK(total(r) == 2 * n);
  CHECK(r.path.size() == (size_t)(2 * n - 1));
}

TEST_CASE("kernel-kernel delays only below HTA's 1.5 ms threshold") {
  // Launches L1 [0, 5] and L2 [6, 11] us (top level), kernels K1 [20, 50] us and K2 (40 us) on one
  // stream, K2 starting `gap` ns after K1's end. Neither gets a launch delay: K1 starts with L2
  // queued, K2 was launched with K1 queued. Below the threshold the gap is a kernel-kernel delay:
  // K1 30 us + gap + K2 40 us. At 1.5 ms it is no delay HTA recognizes (the stream waited for
  // something the trace does not link): no edge into K2, and the longest path is K2 alone.
  for (int64_t gap : {kKernelKernelGapNs - 1, kKernelKernelGapNs}) {
    CAPTURE(gap);
    CpInput in;
    in.host = {op(1, 0, 5'000), op(2, 6'000, 11'000)};
    const int64_t k2 = 50'000 + gap;
    in.gpu = {kernel(10, 1, 0, 20'000, 50'000, 0), kernel(11, 2, 6'000, k2, k2 + 40'000, 0)};
    auto r = tlsql::critical_path(in);
    REQUIRE(r.error.empty());
    if (gap < kKernelKernelGapNs) {
      CHECK(types(r) == "operator kernel_kernel_delay operator ");
      CHECK(total(r) == 30'000 + gap + 40'000);
    } else {
      CHECK(types(r) == "operator ");
      CHECK(total(r) == 40'000);
      CHECK(r.path[0].uid == 11);
    }
  }
}

TEST_CASE("the CUDA runtime lock chains launch calls across threads in the order they end") {
  // Thread 0: op A [0, 100] holds cudaLaunchKernel L1 [10, 50]. Thread 1: op B [15, 200] holds
  // cudaLaunchKernel L2 [20, 60]. The lock (HTA): L1 ended first, so it held the lock first; at
  // L1's end the starts seen since (L2.s, L1.s) get edges to it: L1.s -> L1.e 40 (L1's own),
  // L2.s -> L1.e 0 (waiting); at L2's end, the previous end L1.e -> L2.e 0. L2's own start -> end
  // is not an edge (the walk leaves lock calls to the chain), nor are the walk's edges between
  // two lock nodes. Longest: A.s -10-> L1.s -40-> L1.e -0-> L2.e -140-> B.e = 190; without the
  // lock each thread alone: B 5 + 40 + 140 = 185, A 100.
  CpInput in;
  in.host = {thread_op(1, 0, 0, 100), lock_call(2, 0, 10, 50), thread_op(3, 1, 15, 200), lock_call(4, 1, 20, 60)};
  auto r = tlsql::critical_path(in);
  REQUIRE(r.error.empty());
  CHECK(types(r) == "operator operator dependency operator ");
  CHECK(total(r) == 190);
  REQUIRE(r.path.size() == 4);
  CHECK(r.path[1].uid == 2);  // the lock's edge belongs to the call
  CHECK(std::string(r.path[1].bound_by) == "cpu_bound");
  CHECK(r.path[3].uid == 3);  // L2.e -> B.e: B's

  // Not lock calls (a cudaLaunchKernelExC, a HIP launch): each thread alone, B's 185.
  for (auto& h : in.host) h.lock = false;
  r = tlsql::critical_path(in);
  CHECK(types(r) == "operator operator operator ");
  CHECK(total(r) == 185);

  // A cudaMemcpyAsync is blocking (its time waits for the GPU) and holds the lock: the lock's
  // edge is its own duration with its weight, as in HTA, and the walk adds no zero-weight one.
  // Op A [0, 100] holds M [10, 60]: A.s -10-> M.s -50-> M.e -40-> A.e = 100 (0 for M alone: 50).
  CpInput copy;
  copy.host = {thread_op(1, 0, 0, 100), lock_call(2, 0, 10, 60, true)};
  r = tlsql::critical_path(copy);
  CHECK(total(r) == 100);
  copy.host[1].lock = false;
  r = tlsql::critical_path(copy);
  CHECK(total(r) == 50);
}

TEST_CASE("the backward thread is walked as part of the forward thread (HTA's rule)") {
  // Thread 0: op "forward" F [0, 100]; thread 1: op "autograd::engine::..." G [200, 300], and
  // nothing links them. Merged (one thread id says forward, another autograd), G follows F at top
  // level: F.s -100-> F.e -0-> G.s -100-> G.e = 200. Unmerged: each alone, 100.
  CpInput in;
  in.host = {thread_op(1, 0, 0, 100), thread_op(2, 1, 200, 300)};
  in.host[0].forward = true, in.host[1].autograd = true;
  auto r = tlsql::critical_path(in);
  REQUIRE(r.error.empty());
  CHECK(r.merged);
  CHECK(types(r) == "operator dependency operator ");
  CHECK(total(r) == 200);

  // Two threads say forward: no forward thread, nothing merged.
  in.host.push_back(thread_op(3, 2, 400, 450));
  in.host[2].forward = true;
  r = tlsql::critical_path(in);
  CHECK_FALSE(r.merged);
  CHECK(total(r) == 100);

  // One thread says both: nothing to merge.
  in.host = {thread_op(1, 0, 0, 100), thread_op(2, 1, 200, 300)};
  in.host[0].forward = in.host[0].autograd = true;
  CHECK_FALSE(tlsql::critical_path(in).merged);
}

TEST_CASE("the walk nests the window's events by time, as HTA's call stack does") {
  // Annotation P [0, 100] (not a node) holds ops A [10, 40] and B [50, 90]; A holds C [20, 30].
  // The walk looks through P: A and B are top-level (a dependency between them), and the edge
  // C.e -> A.e belongs to A (an end to an end), A.s -> C.s to A. An op that starts when another
  // ends is its sibling, not its child: D [90, 95] after B (ends before starts at one moment).
  CpInput in;
  in.host = {CpHost{1, 0, 0, 0, 100, false, false, false, false, false}, op(2, 10, 40), op(3, 50, 90), op(4, 20, 30),
             op(5, 90, 95)};
  auto r = tlsql::critical_path(in);
  REQUIRE(r.error.empty());
  // A.s -10-> C.s -10-> C.e -10-> A.e -0-> B.s -40-> B.e -0-> D.s -5-> D.e = 75
  CHECK(types(r) == "operator operator operator dependency operator dependency operator ");
  CHECK(total(r) == 75);
  REQUIRE(r.path.size() == 7);
  CHECK(r.path[0].uid == 2);
  CHECK(r.path[1].uid == 4);
  CHECK(r.path[2].uid == 2);
  CHECK(r.path[5].from_uid == 3);
  CHECK(r.path[5].to_uid == 5);
}
