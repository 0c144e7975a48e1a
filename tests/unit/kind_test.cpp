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

TEST_CASE("serving steps: vLLM's step annotation, or a worker's per-step frame") {
  using tlsql::Kind;
  using tlsql::serving_step;
  auto d = serving_step(Kind::annotation,
                        "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)");
  REQUIRE(d);
  CHECK(d->annotation);
  CHECK(d->tokens == 32);
  CHECK(d->prefill == 0);
  CHECK(d->decode == 32);
  CHECK(std::string(d->phase()) == "decode");
  auto p = serving_step(Kind::annotation, "execute_2048_context_4(sq512sk512)_generation_0()");
  REQUIRE(p);
  CHECK(std::string(p->phase()) == "prefill");
  auto m = serving_step(Kind::annotation, "execute_300_context_1(sq260sk260)_generation_40(sq40sk900)");
  REQUIRE(m);
  CHECK(std::string(m->phase()) == "mixed");
  auto bare = serving_step(Kind::annotation, "execute_8");
  REQUIRE(bare);
  CHECK(bare->tokens == 8);
  CHECK(bare->phase() == nullptr);  // the name says nothing about the requests
  for (const char* n : {"execute_x", "execute_12abc", "ProfilerStep#3", "execute_model"})
    CHECK_MESSAGE(!serving_step(Kind::annotation, n), n);
  // Frames: a step but no batch.
  auto f = serving_step(Kind::python, "vllm/v1/worker/gpu_worker.py(263): execute_model");
  REQUIRE(f);
  CHECK_FALSE(f->annotation);
  CHECK_FALSE(f->tokens.has_value());
  CHECK(serving_step(Kind::python, "sglang/srt/managers/tp_worker.py(190): forward_batch_generation"));
  CHECK(serving_step(Kind::python, "vllm/worker/worker_base.py(393): execute_model"));  // V0
  CHECK(serving_step(Kind::python, "vllm/spec_decode/spec_decode_worker.py(418): execute_model"));
  for (const char* n : {"vllm/v1/worker/gpu_model_runner.py(1002): execute_model", "model.py(3): forward",
                        "vllm/worker/model_runner.py(1620): execute_model", "my_worker_base_x.py(1): execute_model",
                        "vllm/v1/worker/gpu_worker.py(263): execute_model_x", "no frame"})
    CHECK_MESSAGE(!serving_step(Kind::python, n), n);
  CHECK_FALSE(serving_step(Kind::cpu_op, "vllm/v1/worker/gpu_worker.py(263): execute_model"));
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
}
