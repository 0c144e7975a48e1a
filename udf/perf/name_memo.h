// A rule decided from an event name, remembered per name: reports call such rules once per row,
// kernel names repeat millions of times and can be hundreds of characters long, so each name is
// decided once and looked up by view (no copy of the name per row).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace tlsql {

template <class Value>
class NameMemo {
 public:
  template <class Decide>
  Value get(std::string_view name, Decide&& decide) {
    if (auto it = seen_.find(name); it != seen_.end()) return it->second;
    if (seen_.size() > 100000) seen_.clear();  // (a bound on what odd traces can make it hold)
    return seen_.emplace(std::string(name), decide(name)).first->second;
  }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, Value, Hash, std::equal_to<>> seen_;
};

}  // namespace tlsql
