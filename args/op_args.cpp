#include "args/op_args.h"

#include <cctype>
#include <string>

namespace tlsql::args {

using nlohmann::json;

InputDims input_dims(const json& dims) {
  InputDims d;
  if (!dims.is_array()) return d;
  for (const auto& e : dims) {
    Shape s;
    std::vector<Shape> list;
    auto dim = [&](const json& v, Shape& into) {
      if (v.is_number_integer() && v.get<int64_t>() >= 0)
        into.push_back(v.get<int64_t>());
      else
        d.valid = false;
    };
    if (e.is_array())
      for (const auto& v : e) {
        if (v.is_array()) {  // a TensorList: one shape per tensor
          Shape t;
          for (const auto& x : v) dim(x, t);
          list.push_back(std::move(t));
        } else {
          dim(v, s);
        }
      }
    d.shape.push_back(std::move(s));
    d.lists.push_back(std::move(list));
  }
  return d;
}

json concrete_value(std::string_view text) {
  if (text.empty() || text == "None") return nullptr;
  // Python's repr to JSON: True / False / None words, "2." (a float without digits after the point)
  std::string s;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (std::isalpha((unsigned char)c) && (i == 0 || !std::isalnum((unsigned char)text[i - 1]))) {
      size_t j = i;
      while (j < text.size() && std::isalnum((unsigned char)text[j])) ++j;
      const std::string_view word = text.substr(i, j - i);
      if (word == "True" || word == "False" || word == "None") {
        s += word == "True" ? "true" : word == "False" ? "false" : "null";
        i = j - 1;
        continue;
      }
    }
    s += c;
    if (c == '.' && i > 0 && std::isdigit((unsigned char)text[i - 1]) &&
        (i + 1 == text.size() || !std::isdigit((unsigned char)text[i + 1])))
      s += '0';
  }
  json j = parse_bounded(s);
  if (j.is_discarded()) return json(std::string(text));
  return j;
}

std::vector<double> numbers(std::string_view text) {
  std::vector<double> v;
  const json j = concrete_value(text);
  auto add = [&](const json& x) {
    if (x.is_number()) v.push_back(x.get<double>());
  };
  if (j.is_array())
    for (const auto& x : j) add(x);
  else
    add(j);
  return v;
}

std::vector<int64_t> ints(std::string_view text) {
  std::vector<int64_t> v;
  for (double x : numbers(text))  // (saturated: a double beyond int64, or NaN, has no int64 value to cast to)
    v.push_back(x != x ? 0 : x >= 9.2e18 ? INT64_MAX : x <= -9.2e18 ? INT64_MIN : (int64_t)x);
  return v;
}

std::vector<bool> bools(std::string_view text) {
  std::vector<bool> v;
  const json j = concrete_value(text);
  if (j.is_boolean()) v.push_back(j.get<bool>());
  if (j.is_array())
    for (const auto& x : j)
      if (x.is_boolean()) v.push_back(x.get<bool>());
  return v;
}

bool truthy(std::string_view text) {
  const json j = concrete_value(text);
  return (j.is_boolean() && j.get<bool>()) || (j.is_number() && j.get<double>() != 0) || text == "true";
}

}  // namespace tlsql::args
