// Links the events of one trace into the call tree SPEC.md describes: host events nest by time
// per thread, GPU work hangs under its launch, other threads' roots join the main thread's
// annotations, and every event gets its step and (for backward ops) its forward op.
#pragma once

#include "health.h"
#include "trace_model.h"

namespace tlsql {

// For each GPU event launched by a runtime call: the launch and TraceLens's "kernel launcher"
// (the nearest cpu_op above the launch, skipping python frames and a pass-through `execute`
// op, else the launch itself). Indexes into the trace's events.
struct LaunchLink {
  int64_t gpu, runtime, launcher;
};

class ProfileTreeBuilder {
 public:
  ProfileTreeBuilder(ParsedTrace& trace, Health& health) : t_(trace), h_(health) {}
  void build();
  const std::vector<LaunchLink>& launches() const { return launches_; }

 private:
  void join_begin_end();
  void nest_host_events();
  void link_gpu_events();
  void attach_thread_roots();
  void compute_depths();
  void assign_steps();
  void link_backward_to_forward();
  void find_launchers();

  ParsedTrace& t_;
  Health& h_;
  std::vector<LaunchLink> launches_;
};

}  // namespace tlsql
