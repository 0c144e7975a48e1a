// Which python frames are the user's code. torch.profiler names a frame "PATH.py(LINE): FUNCTION",
// PATH trimmed of its sys.path entry ("torch/nn/modules/module.py(1501): _call_impl",
// "transformers/models/owlv2/modeling_owlv2.py(410): forward", "threading.py(982): run"), or
// absolute when the file is outside sys.path (a script).
#pragma once

#include <string_view>

namespace tlsql {

// True for a frame of torch itself (torch, functorch, torchgen) or of Python's standard library
// (its module names, <frozen ...> and <built-in ...> frames, files under .../lib/python3.N/);
// a path that still holds site-packages/ or dist-packages/ is judged by what follows it. Every
// other frame (the model, transformers, vllm, the user's script) is the user's code: source(uid)
// reports the nearest one.
bool library_frame(std::string_view frame);

// True when `name` is a python frame location: it holds ".py(" followed later by ")".
bool python_location(std::string_view name);

}  // namespace tlsql
