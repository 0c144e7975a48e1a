// src/readers/emit_nvtx.h: every text form of emit_nvtx's ranges (PyTorch's getNvtxStr across
// versions) and the ranges that are no op's, with the parse written out by hand from the text.
#include "src/readers/emit_nvtx.h"

#include <doctest/doctest.h>

#include <string>

namespace {

using namespace tlsql;
using emit_nvtx::op_range;

struct Want {
  std::string name = {}, sizes = {};
  int64_t seq = kNull, op_id = kNull;
  bool stashed = false, user = false;
};

void check_op(std::string_view text, const Want& w) {
  INFO(text);
  auto r = op_range(text);
  REQUIRE(r.has_value());
  CHECK(std::string(r->name) == w.name);
  CHECK(std::string(r->sizes) == w.sizes);
  CHECK(r->seq == w.seq);
  CHECK(r->op_id == w.op_id);
  CHECK(r->stashed == w.stashed);
  CHECK(r->user == w.user);
}

}  // namespace

TEST_CASE("emit_nvtx: the current form, seq / op_id / sizes / input_op_ids") {
  check_op("aten::add, seq = 12, op_id = 4, sizes = [[2, 3], [3]], input_op_ids = [(1,0), (2,0)]",
           {.name = "aten::add", .sizes = "[[2, 3], [3]]", .seq = 12, .op_id = 4});
  check_op("aten::empty, op_id = 5, sizes = [[]]", {.name = "aten::empty", .sizes = "[[]]", .op_id = 5});
  check_op("detach_, op_id = 990725", {.name = "detach_", .op_id = 990725});
  check_op("nccl:all_to_all, op_id = 7", {.name = "nccl:all_to_all", .op_id = 7});
  check_op("autograd::engine::evaluate_function: MulBackward0, seq = 13, op_id = 20",
           {.name = "autograd::engine::evaluate_function: MulBackward0", .seq = 13, .op_id = 20});
}

TEST_CASE("emit_nvtx: PyTorch before op ids (finding 7)") {
  check_op("aten::add, seq = 12, sizes = [[2, 3], [3]]", {.name = "aten::add", .sizes = "[[2, 3], [3]]", .seq = 12});
  check_op("aten::mul, seq = 13", {.name = "aten::mul", .seq = 13});
  check_op("aten::empty, sizes = [[]]", {.name = "aten::empty", .sizes = "[[]]"});
  // seq -1 and no shapes: getNvtxStr wrote the bare name.
  check_op("aten::empty", {.name = "aten::empty"});
  check_op("MulBackward0, stashed seq = 13", {.name = "MulBackward0", .seq = 13, .stashed = true});
  check_op("MulBackward0, seq = 13", {.name = "MulBackward0", .seq = 13});
  // A user's range with a seq-like tail and no op name, and bare names that are no qualified op name.
  CHECK_FALSE(op_range("epoch 1, seq = 3"));
  CHECK_FALSE(op_range("mylib range"));
  CHECK_FALSE(op_range("step"));
  CHECK_FALSE(op_range("aten::"));
  CHECK_FALSE(op_range("ns::a b"));
  CHECK_FALSE(op_range(""));
  CHECK_FALSE(op_range(", op_id = 3"));
}

TEST_CASE("emit_nvtx: a record_function name holding ', ' is cut only before a field (finding 12)") {
  check_op("my block, part 1, op_id = 3", {.name = "my block, part 1", .op_id = 3, .user = true});
  check_op("## forward ##, op_id = 9", {.name = "## forward ##", .op_id = 9, .user = true});
  check_op("FSDP::pre_forward (blocks.3._checkpoint_wrapped_module), op_id = 990878",
           {.name = "FSDP::pre_forward (blocks.3._checkpoint_wrapped_module)", .op_id = 990878, .user = true});
  // A plain range with ", " and no field: no op range, the whole text stays the annotation's.
  CHECK_FALSE(op_range("my block, part 1"));
  CHECK_FALSE(op_range("a, sequence = 3"));
}

TEST_CASE("emit_nvtx: backward names (finding 2)") {
  using emit_nvtx::backward_name;
  CHECK(backward_name("MulBackward0"));
  CHECK(backward_name("AddmmBackward1"));
  CHECK(backward_name("MyReLUBackward"));  // a custom autograd.Function's: name + "Backward"
  CHECK(backward_name("CompiledFunctionBackward"));
  CHECK(backward_name("autograd::engine::evaluate_function: MyReLUBackward"));
  CHECK_FALSE(backward_name("RegisterPostBackwardFunction"));  // FSDP's hook: a forward op
  CHECK_FALSE(backward_name("aten::mul"));
  CHECK_FALSE(backward_name("MyReLU"));
}

TEST_CASE("emit_nvtx: a backward op's forward thread by (process, seq)") {
  emit_nvtx::ForwardThreads f;
  auto fwd = [&](std::string_view text, int64_t pid, int64_t tid) { return f.fwd_tid(*op_range(text), pid, tid); };
  CHECK(fwd("MyReLU, seq = 12, op_id = 3", 7, 7) == kNull);      // forward: remembered, no fwd thread
  CHECK(fwd("aten::relu, seq = 12, op_id = 4", 7, 9) == kNull);  // the first forward with seq 12 stays
  CHECK(fwd("MyReLUBackward, seq = 12, op_id = 31", 7, 8) == 7);
  CHECK(fwd("autograd::engine::evaluate_function: MyReLUBackward, seq = 12, op_id = 30", 7, 8) == 7);
  CHECK(fwd("MulBackward0, seq = 12, op_id = 40", 8, 5) == 5);  // another process: its own thread
  CHECK(fwd("AddBackward0, stashed seq = 99", 7, 0) == 1);      // unknown forward, thread 0: still backward
  CHECK(fwd("my block, op_id = 3", 7, 7) == kNull);
}

TEST_CASE("emit_nvtx: a number past int64 is no number, never its first digits") {
  // 24 digits: not a Sequence number (the text stays whole in args.nvtx); 19 digits within int64 read.
  check_op("aten::add, seq = 123456789012345678901234, op_id = 4", {.name = "aten::add", .op_id = 4});
  check_op("aten::add, seq = 9223372036854775807, op_id = 4",
           {.name = "aten::add", .seq = 9223372036854775807, .op_id = 4});
}
