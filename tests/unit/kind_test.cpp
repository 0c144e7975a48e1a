#include "src/kind.h"

#include <doctest/doctest.h>

using namespace tlsql;

TEST_CASE("kind_from_name inverts kind_name; other names are Kind::other") {
  for (int i = 0; i <= (int)Kind::other; ++i) CHECK(kind_from_name(kind_name((Kind)i)) == (Kind)i);
  CHECK(kind_from_name("Kernel") == Kind::other);  // kind names are tlsql's, lower case
  CHECK(kind_from_name("") == Kind::other);
}

TEST_CASE("GPU work is kernels, memcpys and memsets") {
  CHECK(is_gpu_work(Kind::kernel));
  CHECK(is_gpu_work(Kind::memcpy));
  CHECK(is_gpu_work(Kind::memset));
  CHECK_FALSE(is_gpu_work(Kind::gpu_annotation));  // on the GPU's timeline, but no work of its own
  CHECK_FALSE(is_gpu_work(Kind::sync));
  CHECK_FALSE(is_gpu_work(Kind::runtime));
}

TEST_CASE("graph launches: CUDA runtime and driver, HIP, per-thread-stream spellings") {
  using tlsql::is_graph_launch;
  for (const char* n : {"cudaGraphLaunch", "cuGraphLaunch", "hipGraphLaunch", "cudaGraphLaunch_ptsz",
                        "hipGraphLaunch_spt", "cudaGraphLaunch_v10000"})
    CHECK_MESSAGE(is_graph_launch(n), n);
  for (const char* n : {"cudaLaunchKernel", "cudaGraphLaunchX", "cudaGraphInstantiate", "hipGraphExecDestroy",
                        "GraphLaunch", "cudaGraphLaunc", ""})
    CHECK_MESSAGE(!is_graph_launch(n), n);
}

TEST_CASE("launched work of a runtime call, as inside a graph capture") {
  using tlsql::Kind;
  using tlsql::launched_work;
  for (const char* n : {"cudaLaunchKernel", "cudaLaunchKernelExC", "cudaLaunchKernelExC_v11060", "cuLaunchKernel",
                        "cuLaunchKernelEx", "hipLaunchKernel", "hipModuleLaunchKernel", "hipExtModuleLaunchKernel",
                        "hipExtLaunchKernel", "cudaLaunchCooperativeKernel", "cudaLaunchKernel_ptsz"})
    CHECK_MESSAGE(launched_work(n) == Kind::kernel, n);
  for (const char* n : {"cudaMemcpyAsync", "cudaMemcpy2DAsync", "hipMemcpyAsync", "cuMemcpyHtoDAsync_v2",
                        "hipMemcpyWithStream", "cudaMemcpyPeerAsync"})
    CHECK_MESSAGE(launched_work(n) == Kind::memcpy, n);
  for (const char* n : {"cudaMemsetAsync", "hipMemsetAsync", "cuMemsetD32Async"})
    CHECK_MESSAGE(launched_work(n) == Kind::memset, n);
  // Graph launches, host nodes, synchronous copies, queries and ops launch no node of their own.
  for (const char* n : {"cudaGraphLaunch", "hipGraphLaunch", "cudaLaunchHostFunc", "cudaMemcpy", "hipMemset",
                        "cudaStreamBeginCapture", "hipGetDevicePropertiesR0600", "aten::mm", "LaunchKernel", ""})
    CHECK_MESSAGE(launched_work(n) == Kind::other, n);
}

TEST_CASE("capture boundaries") {
  using tlsql::capture_boundary;
  for (const char* n : {"cudaStreamBeginCapture", "cudaStreamBeginCaptureToGraph", "cuStreamBeginCapture_v2",
                        "hipStreamBeginCapture", "cudaStreamBeginCapture_ptsz"})
    CHECK_MESSAGE(capture_boundary(n) == 1, n);
  for (const char* n : {"cudaStreamEndCapture", "hipStreamEndCapture", "cuStreamEndCapture"})
    CHECK_MESSAGE(capture_boundary(n) == -1, n);
  for (const char* n :
       {"hipStreamGetCaptureInfo", "cudaStreamIsCapturing", "cudaGraphInstantiate", "StreamBeginCapture"})
    CHECK_MESSAGE(capture_boundary(n) == 0, n);
}

TEST_CASE("blocking host calls: HTA's list, HIP and per-thread spellings") {
  using tlsql::blocking_host_call;
  for (const char* n : {"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize", "cudaEventQuery",
                        "cudaMemcpy", "cudaMemcpyAsync", "hipDeviceSynchronize", "hipStreamSynchronize",
                        "hipMemcpyWithStream", "cudaMemcpyAsync_ptsz", "cudaStreamSynchronize_v3020"})
    CHECK_MESSAGE(blocking_host_call(n), n);
  for (const char* n : {"cudaLaunchKernel", "cudaMemsetAsync", "cudaMemcpy2DAsync", "cudaEventRecord",
                        "cudaStreamWaitEvent", "DeviceSynchronize", "cudaDeviceSynchronizeX", "aten::copy_", ""})
    CHECK_MESSAGE(!blocking_host_call(n), n);
  // The calls that hold the CUDA runtime's lock (HTA's three), CUDA's only.
  for (const char* n : {"cudaLaunchKernel", "cudaMemcpyAsync", "cudaHostAlloc", "cudaLaunchKernel_ptsz"})
    CHECK_MESSAGE(tlsql::runtime_lock_call(n), n);
  for (const char* n : {"cudaLaunchKernelExC", "cuLaunchKernel", "hipLaunchKernel", "hipMemcpyAsync", "cudaMemcpy",
                        "cudaMemsetAsync", "cudaHostAllocX", "LaunchKernel", ""})
    CHECK_MESSAGE(!tlsql::runtime_lock_call(n), n);
  // Waits only: no copies, no queries.
  for (const char* n : {"cudaDeviceSynchronize", "cudaStreamSynchronize_ptsz", "hipEventSynchronize"})
    CHECK_MESSAGE(tlsql::gpu_wait_call(n), n);
  for (const char* n : {"cudaMemcpyAsync", "cudaEventQuery", "cudaMemcpy", "cudaStreamWaitEvent", "aten::item", ""})
    CHECK_MESSAGE(!tlsql::gpu_wait_call(n), n);
}
