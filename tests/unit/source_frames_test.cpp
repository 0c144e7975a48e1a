// Which python frames are the user's code (udf/tree/source_frames.h), on frame names from real traces.
#include "udf/tree/source_frames.h"

#include <doctest/doctest.h>

using tlsql::library_frame;
using tlsql::python_location;

TEST_CASE("torch and the standard library are library frames") {
  for (const char* f :
       {"torch/nn/modules/module.py(1501): _call_impl", "torch/utils/_device.py(100): __torch_function__",
        "functorch/_src/vmap.py(12): f", "threading.py(982): run", "multiprocessing/process.py(108): run",
        "typing.py(350): inner", "_collections_abc.py(900): update", "json/decoder.py(337): decode",
        "<frozen importlib._bootstrap>(1178): _find_and_load", "<built-in method exp of type object>",
        "/usr/lib/python3.11/threading.py(975): _bootstrap_inner",
        "/opt/venv/lib/python3.10/site-packages/torch/nn/functional.py(2573): layer_norm"}) {
    CAPTURE(f);
    CHECK(library_frame(f));
  }
}

TEST_CASE("models, model libraries and scripts are the user's code") {
  for (const char* f : {"transformers/models/owlv2/modeling_owlv2.py(410): forward",
                        "vllm/model_executor/models/llama.py(343): forward", "train.py(42): <module>",
                        "/home/me/project/model.py(10): forward", "torchvision/models/resnet.py(92): forward",
                        "/opt/venv/lib/python3.10/site-packages/timm/layers/mlp.py(44): forward",
                        "torch_geometric/nn/conv/gcn_conv.py(241): forward", "mytorch/x.py(1): f"}) {
    CAPTURE(f);
    CHECK_FALSE(library_frame(f));
  }
}

TEST_CASE("python locations") {
  CHECK(python_location("model.py(10): forward"));
  CHECK_FALSE(python_location("nn.Module: Linear_0"));
  CHECK_FALSE(python_location("aten::mm"));
  CHECK_FALSE(python_location("x.py(10"));
}
