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
