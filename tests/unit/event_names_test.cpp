// How the diff report keys names (udf/names/event_names.h), on names from real traces.
#include "udf/names/event_names.h"

#include <doctest/doctest.h>

using tlsql::normalize_name;

TEST_CASE("addresses and python line numbers are taken out") {
  CHECK(normalize_name("<built-in method apply of FunctionMeta object at 0x7cc1a2b3c4d0>") ==
        "<built-in method apply of FunctionMeta object at 0x?>");
  CHECK(normalize_name("torch/nn/modules/module.py(1501): _call_impl") == "torch/nn/modules/module.py(?): _call_impl");
  CHECK(normalize_name("/home/me/model.py(42): forward") == "/home/me/model.py(?): forward");
  CHECK(normalize_name("a 0xDEADBEEF and 0x1f2e3d") == "a 0x? and 0x?");
}

TEST_CASE("everything else stays") {
  for (const char* n : {"aten::mm", "ProfilerStep#1010", "void gemm<0x10>(int)", "model.py(x): f", "v0x1234",
                        "cudaLaunchKernel", "nn.Module: Linear_0", "Memcpy DtoH (Device -> Pinned)", "ab.py(12"}) {
    CAPTURE(n);
    CHECK(normalize_name(n) == n);
  }
}
