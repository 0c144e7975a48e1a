// Which ops replay refuses (replay/op_policy.h) and the IR builder's "init" (TraceLens's rule),
// against LibTorch's real operator registry.
#include <ATen/core/dispatch/Dispatcher.h>
#include <doctest/doctest.h>
#include <torch/csrc/jit/runtime/operator.h>
#include <torch/version.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include "replay/ir.h"
#include "replay/op_policy.h"
#include "replay/runner.h"

using nlohmann::json;
using namespace tlsql::replay;

namespace {

// The registered schema NAME.OVERLOAD (TorchScript's registry holds dispatcher ops and builtins).
c10::FunctionSchema schema(const std::string& name, const std::string& overload = "") {
  for (const auto& op : torch::jit::getAllOperatorsFor(c10::Symbol::fromQualString(name)))
    if (op->schema().overload_name() == overload) return op->schema();
  FAIL("no schema " << name << "." << overload);
  throw std::logic_error("unreachable");
}

std::string why(const std::string& name, const std::string& overload = "") { return refusal(schema(name, overload)); }

// The recorded args of a cpu_op as the profiler writes them.
json recorded(json dims, json types, json concrete) {
  return {{"Input Dims", dims}, {"Input type", types}, {"Concrete Inputs", concrete}};
}

// name -> init of each tensor argument of the IR build_ir makes.
std::map<std::string, json> inits(const std::string& op, const json& args) {
  std::string err;
  auto ir = build_ir(op, args, err);
  REQUIRE_MESSAGE(ir, err);
  std::map<std::string, json> out;
  for (const char* part : {"list_pos_args", "list_kwargs"})
    for (const auto& a : (*ir)["replay_ir"][part])
      if (a["value"].is_object()) out[a["arg_name"]] = a["value"]["init"];
  return out;
}

}  // namespace

TEST_CASE("replay refuses ops with effects outside their tensors, each with its reason") {
  // Files: from_file opens (shared=True: creates, grows, writes) the file it names.
  CHECK(why("aten::from_file").find("refused: aten::from_file takes 'filename', the name of a file") == 0);
  CHECK(why("aten::from_file", "out").find("refused: aten::from_file.out takes 'filename'") == 0);
  // Other namespaces: collectives, the profiler, the TorchScript interpreter, packed weights.
  for (const char* op : {"c10d::allreduce_", "profiler::_record_function_enter", "prim::Print"}) {
    auto s = torch::jit::getAllOperatorsFor(c10::Symbol::fromQualString(op));
    REQUIRE(!s.empty());
    CHECK(refusal(s.front()->schema()).find("refused: replay runs only aten:: operators") == 0);
  }
  // Interpreter builtins have no tensor kernel: aten::save writes a file, manual_seed sets RNG state.
  CHECK(why("aten::save") == "refused: aten::save is a TorchScript interpreter builtin, not a tensor kernel");
  CHECK(why("aten::manual_seed").find("is a TorchScript interpreter builtin") != std::string::npos);
  // Values that are not data: a Storage (another tensor's or a file's memory), a Stream.
  CHECK(why("aten::set_", "source_Storage") ==
        "refused: aten::set_.source_Storage takes 'source' (Storage), which is not data but something outside "
        "the op's tensors");
  CHECK(why("aten::record_stream").find("takes 's' (Stream)") != std::string::npos);
  // Process settings and queries.
  for (const char* op : {"aten::_cufft_set_plan_cache_max_size", "aten::_cufft_clear_plan_cache"})
    CHECK(why(op).find("neither takes nor returns a tensor") != std::string::npos);
}

TEST_CASE("replay runs ops that compute on tensors: in place, out=, modes as text, devices, RNG") {
  const std::pair<const char*, const char*> allowed[] = {
      {"aten::mm", ""},
      {"aten::add_", "Tensor"},          // writes its own self
      {"aten::addmm", "out"},            // out= tensors are the replay's own
      {"aten::copy_", ""},               // the destination too
      {"aten::fill_", "Scalar"},         //
      {"aten::masked_fill_", "Scalar"},  //
      {"aten::resize_", ""},             //
      {"aten::gelu", ""},                // str approximate: a mode
      {"aten::div", "Tensor_mode"},      // str? rounding_mode
      {"aten::einsum", ""},              // str equation
      {"aten::scatter_reduce", "two"},   // str reduce
      {"aten::conv2d", "padding"},       // str padding ("same")
      {"aten::bernoulli_", "float"},     // Generator? (None: the worker's own generator)
      {"aten::to", "device"},            // Device (the worker's own)
      {"aten::empty", "memory_format"},  // a factory: makes a tensor from sizes
      {"aten::_local_scalar_dense", ""},
      {"aten::embedding", ""},
  };
  for (const auto& [op, overload] : allowed) CHECK_MESSAGE(why(op, overload) == "", op << "." << overload);
}

TEST_CASE("every aten kernel of this LibTorch that replay refuses") {
  std::set<std::string> refused;
  size_t kernels = 0;
  for (const auto& op : torch::jit::getAllOperators()) {
    const auto& s = op->schema();
    if (s.name().rfind("aten::", 0) != 0 || !c10::Dispatcher::singleton().findSchema({s.name(), s.overload_name()}))
      continue;
    ++kernels;
    if (!refusal(s).empty()) refused.insert(s.name() + (s.overload_name().empty() ? "" : "." + s.overload_name()));
  }
  std::string list;
  for (const auto& r : refused) list += r + " ";
  MESSAGE("LibTorch " TORCH_VERSION ": " << refused.size() << " of " << kernels << " aten kernels refused: " << list);
#if TORCH_VERSION_MAJOR == 1 && TORCH_VERSION_MINOR == 13
  // Read by hand from the schemas of Debian's 1.13.1 (every aten kernel printed, then searched for
  // argument types other than tensors, numbers, flags, enums, str, Device and Generator, for str
  // arguments that name files, and for signatures without a tensor): the file op, the Storage and
  // Stream ops, the quantized RNNs that take packed cell objects (CellParamsBase[]), distributed
  // autograd's get_gradients (int -> Dict), and settings / queries without a tensor. Nothing else.
  const std::set<std::string> expected = {"aten::from_file",
                                          "aten::from_file.out",
                                          "aten::set_.source_Storage",
                                          "aten::set_.source_Storage_storage_offset",
                                          "aten::set.source_Storage",
                                          "aten::set.source_Storage_storage_offset",
                                          "aten::set.source_Storage_out",
                                          "aten::set.source_Storage_storage_offset_out",
                                          "aten::record_stream",
                                          "aten::quantized_gru.data",
                                          "aten::quantized_gru.input",
                                          "aten::quantized_lstm.data",
                                          "aten::quantized_lstm.input",
                                          "aten::get_gradients",
                                          "aten::_cufft_clear_plan_cache",
                                          "aten::_cufft_set_plan_cache_max_size",
                                          "aten::_cufft_get_plan_cache_max_size",
                                          "aten::_cufft_get_plan_cache_size",
                                          "aten::_nnpack_available",
                                          "aten::is_vulkan_available",
                                          "aten::_use_cudnn_rnn_flatten_weight",
                                          "aten::promote_types",
                                          "aten::can_cast",
                                          "aten::result_type.Scalar_Scalar"};
  CHECK(refused == expected);
#endif
}

TEST_CASE("the IR builder refuses with the worker's reason; the worker refuses before making anything") {
  std::string err;
  // from_file as a trace records it: the path and shared=True in Concrete Inputs.
  const json args =
      recorded(json::array({json::array(), json::array(), json::array(), json::array(), json::array(), json::array(),
                            json::array()}),
               {"Scalar", "Scalar", "Scalar", "", "", "", ""}, {"/nonexistent/x.bin", "True", "4096", "", "", "", ""});
  CHECK(!build_ir("aten::from_file", args, err));
  CHECK(err == why("aten::from_file"));
  CHECK(!build_ir("c10d::allreduce_", recorded({{2}}, {"float"}, {""}), err));
  CHECK(err.find("refused: replay runs only aten:: operators") == 0);

  // An IR file naming from_file with a path under a fresh folder: refused, and no file appears.
  auto dir = std::filesystem::temp_directory_path() / ("tlsql_replay_policy_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "created.bin").string();
  json ir = {{"op_name", "aten::from_file"},
             {"replay_ir",
              {{"list_pos_args",
                {{{"arg_name", "filename"}, {"arg_type", "str"}, {"value", path}},
                 {{"arg_name", "shared"}, {"arg_type", "bool?"}, {"value", true}},
                 {{"arg_name", "size"}, {"arg_type", "int?"}, {"value", 4096}}}},
               {"list_kwargs", json::array()}}}};
  RunResult r = run_ir(ir, RunOptions{"cpu", 0, 1, nullptr});
  CHECK(!r.ok);
  CHECK(r.error == why("aten::from_file"));
  CHECK(!std::filesystem::exists(path));
  std::filesystem::remove_all(dir);
}

TEST_CASE("init: null only for what fill_ and copy_ overwrite whole, as TraceLens's EventReplay writes it") {
  const json none = json::array();
  // fill_.Scalar: self is overwritten.
  CHECK(inits("aten::fill_", recorded({{2, 3}, none}, {"float", "Scalar"}, {"", "0"})) ==
        std::map<std::string, json>{{"self", nullptr}});
  // fill_.Tensor: TraceLens nulls every tensor of fill_, the 0-d value included.
  CHECK(inits("aten::fill_", recorded({{2, 3}, none}, {"float", "float"}, {"", ""})) ==
        std::map<std::string, json>{{"self", nullptr}, {"value", nullptr}});
  // copy_: the destination is overwritten; src is read.
  CHECK(inits("aten::copy_", recorded({{2, 3}, {2, 3}, none}, {"float", "float", "Scalar"}, {"", "", "False"})) ==
        std::map<std::string, json>{{"self", nullptr}, {"src", "normal"}});
  // In-place ops read their self: add_ (TraceLens's replay_ir_by_uid.json for the bert trace has
  // add_'s self as "normal"), masked_fill_ (only some elements are written).
  CHECK(inits("aten::add_", recorded({{2, 3}, {2, 3}, none}, {"float", "float", "Scalar"}, {"", "", "1"})) ==
        std::map<std::string, json>{{"self", "normal"}, {"other", "normal"}});
  CHECK(inits("aten::masked_fill_", recorded({{2, 3}, {2, 3}, none}, {"float", "bool", "Scalar"}, {"", "", "0"})) ==
        std::map<std::string, json>{{"self", "normal"}, {"mask", "normal"}});
  // An out= tensor (Tensor(a!)) is "normal" too: TraceLens's rule is by op, not by annotation.
  CHECK(inits("aten::mm", recorded({{2, 3}, {3, 4}, {2, 4}}, {"float", "float", "float"}, {"", "", ""})) ==
        std::map<std::string, json>{{"self", "normal"}, {"mat2", "normal"}, {"out", "normal"}});
  // Recorded without the namespace, fill_ is still aten::fill_ (TraceLens would write "normal").
  CHECK(inits("fill_", recorded({{2, 3}, none}, {"float", "Scalar"}, {"", "0"})) ==
        std::map<std::string, json>{{"self", nullptr}});
}
