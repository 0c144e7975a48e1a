// The critical path of one window of one trace (HTA's critical_path_analysis, docs/reports.md):
// a graph whose nodes are the start and the end of each host op / runtime call and each piece of
// GPU work, whose edges are durations and delays (and zero-weight dependencies), and its longest
// path. The algorithm works on plain rows (CpInput) so that it is tested without a database; the
// table-valued function critical_path(annotation, ...) reads them from a schema's events.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tlsql {

struct CpHost {  // a host event (any kind) starting in the window with a duration > 0
  int64_t uid;
  int32_t pid, tid;  // numbered, each on its own (HTA merges the backward thread into the forward one by tid)
  int64_t ts, end;
  bool node;      // an op, runtime or driver call: it gets a start and an end node
  bool blocking;  // blocking_host_call(name): its duration is waiting, weight 0
  bool lock;      // runtime_lock_call(name): runs only while holding the CUDA runtime's lock
  bool forward;   // an op or annotation whose name has "forward" (HTA's forward-thread mark)
  bool autograd;  // an op or annotation whose name has "autograd" (HTA's backward-thread mark)
};

struct CpGpu {  // a piece of GPU work of the whole trace with its launch call (launch_link)
  int64_t uid, runtime;
  int64_t runtime_ts;      // the launch call's start
  int32_t runtime_thread;  // and thread
  int64_t ts, end;
  int64_t stream;      // (device, stream), numbered
  bool in_window;      // its launch call starts in the window with a duration > 0: it gets nodes
  bool communication;  // a collective (gpu_class.h): gpu_communication_bound, else gpu_compute_bound
};

struct CpSync {  // a cuda_sync event
  enum What { stream_sync, context_sync, event_sync, stream_wait } what;
  int64_t uid, ts, end;
  int64_t stream;        // the stream it synchronizes (stream_sync) or that waits (stream_wait)
  int64_t runtime = -1;  // the host call with its correlation, if in the window
  int64_t wait_ts = 0;   // stream_wait: that call's start and thread
  int32_t wait_thread = -1;
  int64_t record_ts = -1;      // event_sync / stream_wait: start of the cudaEventRecord waited for
  int64_t record_stream = -1;  // and the stream it recorded on; -1: unknown (older traces)
};

// A cudaStreamWaitEvent / hipStreamWaitEvent call with no cuda_sync "Stream Wait Event" event
// (older traces, AMD's, and most of today's: Kineto writes them only with its sync events on),
// which HTA's graph cannot see. critical_path() infers the wait where the trace says enough: the
// work waited for is the last one launched, before the event's record, on the stream the record
// call's thread launched on last (the stream the event was recorded on, as PyTorch records one
// right after its work); the waiting work, the next one its thread launches after the wait.
struct CpWait {
  int64_t uid, ts;
  int32_t thread;          // (pid, tid), numbered as CpGpu::runtime_thread
  int64_t record_ts = -1;  // start of the latest cudaEventRecord before it on its thread; -1 none
};

// HTA's KERNEL_KERNEL_DELAY_THRESHOLD_US: a gap between two pieces of GPU work on a stream is a
// kernel-kernel delay only when shorter; a longer one means the stream waited for something the
// trace does not link (usually the host), so the later work gets no edge from the earlier one.
constexpr int64_t kKernelKernelGapNs = 1'500'000;

struct CpInput {
  std::vector<CpHost> host;
  std::vector<CpGpu> gpu;
  std::vector<CpSync> sync;
  std::vector<CpWait> waits;  // the window's stream waits without a sync event
};

enum class CpEdge : uint8_t { operator_kernel, dependency, kernel_launch_delay, kernel_kernel_delay, sync_dependency };
const char* cp_edge_name(CpEdge t);  // HTA's names: critical_path_operator, ...

struct CpStep {  // one edge of the path, in path order
  CpEdge type;
  int64_t from_uid, to_uid;
  bool from_end, to_end;  // which node of each event: its start (false) or its end (true)
  int64_t from_ts, to_ts;
  int64_t weight;         // ns
  int64_t uid;            // the event the edge's time belongs to (HTA's attribution), -1 for none
  const char* bound_by;   // HTA's classes: cpu_bound, gpu_compute_bound, ...; "" for dependencies
  bool inferred = false;  // a sync dependency from a CpWait (tlsql's rule, not HTA's)
};

// What became of the window's CpWaits: inferred (an edge added), or not placed and why.
struct CpWaits {
  int64_t inferred = 0;
  std::vector<std::pair<int64_t, const char*>> unplaced;  // (uid, why), in input order
};

struct CpResult {
  std::vector<CpStep> path;
  int64_t nodes = 0, edges = 0;
  int64_t negative = 0;  // edges whose end precedes their start (weight set to 0, as HTA does)
  bool merged = false;   // the backward thread was walked as part of the forward thread (HTA's rule)
  CpWaits waits;
  std::string error;  // non-empty: no path (a cycle, or nothing in the window)
};

CpResult critical_path(const CpInput& in);

}  // namespace tlsql
