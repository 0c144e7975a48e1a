// The profiler's argument formats (args/op_args.h), as traces record them.
#include "args/op_args.h"

#include <doctest/doctest.h>

using namespace tlsql::args;
using nlohmann::json;

TEST_CASE("Concrete Inputs: Python reprs") {
  CHECK(concrete_value("2") == json(2));
  CHECK(concrete_value("0.") == json(0.0));
  CHECK(concrete_value("1e-05") == json(1e-05));
  CHECK(concrete_value("-0.001") == json(-0.001));
  CHECK(concrete_value("[1, 1]") == json::array({1, 1}));
  CHECK(concrete_value("[4., 4.]") == json::array({4.0, 4.0}));
  CHECK(concrete_value("[True, True, False]") == json::array({true, true, false}));
  CHECK(concrete_value("True") == json(true));
  CHECK(concrete_value("None").is_null());
  CHECK(concrete_value("").is_null());                  // not recorded
  CHECK(concrete_value("reflect") == json("reflect"));  // a string argument
  CHECK(concrete_value("inf") == json("inf"));
  CHECK(concrete_value("Nonesuch") == json("Nonesuch"));  // a word that starts like None is text
}

TEST_CASE("numbers, ints, bools, truthy") {
  CHECK(numbers("[2., 2.5]") == std::vector<double>{2.0, 2.5});
  CHECK(numbers("2.5") == std::vector<double>{2.5});
  CHECK(numbers("None").empty());
  CHECK(numbers("False").empty());
  CHECK(ints("[-1]") == std::vector<int64_t>{-1});
  CHECK(ints("[16, 16]") == std::vector<int64_t>{16, 16});
  CHECK(ints("2.5") == std::vector<int64_t>{2});
  CHECK(bools("[True, False, True]") == std::vector<bool>{true, false, true});
  CHECK(bools("[1, 0]").empty());
  CHECK(truthy("True"));
  CHECK(truthy("1"));
  CHECK(!truthy("False"));
  CHECK(!truthy("0"));
  CHECK(!truthy(""));
}

TEST_CASE("Input Dims: shapes, 0-dim and absent tensors, TensorLists") {
  const InputDims d = input_dims(json::parse(R"([[2, 3], [], [[4, 5], [6]], []])"));
  REQUIRE(d.shape.size() == 4);
  CHECK(d.shape[0] == Shape{2, 3});
  CHECK(d.shape[1].empty());
  CHECK(d.shape[2].empty());  // a list has no shape of its own
  CHECK(d.lists[2] == std::vector<Shape>{{4, 5}, {6}});
  CHECK(d.lists[0].empty());
  CHECK(input_dims(json("not dims")).shape.empty());
  CHECK(d.valid);
  // A dimension that is not a non-negative integer: no shape is known (not one with it left out).
  for (const char* bad : {"[[-64, 128]]", "[[2.5, 3]]", "[[2, \"x\"]]", "[[[4, -1]]]", "[[2, null]]"})
    CHECK_MESSAGE(!input_dims(json::parse(bad)).valid, bad);
  CHECK(input_dims(json::parse("[[0, 3], []]")).valid);
}

TEST_CASE("Concrete Inputs integers beyond int64 saturate") {
  CHECK(tlsql::args::ints("1e30") == std::vector<int64_t>{INT64_MAX});
  CHECK(tlsql::args::ints("[-1e30, 2]") == std::vector<int64_t>{INT64_MIN, 2});
}
