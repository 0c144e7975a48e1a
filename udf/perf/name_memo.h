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

// The same for names that lie in a loaded trace's store (EventView::name of a store's row), looked
// up by where they lie instead of by their bytes: a store's names neither move nor change while it
// lives, so a place stands for its bytes, and hashing a place costs nothing where a kernel name of
// 200 characters took ~1,000 instructions a row. Its owner lives no longer than the store (what a
// schema holds is cached per schema_identity: another store, another owner).
template <class Value>
class StoredNameMemo {
 public:
  template <class Decide>
  Value get(std::string_view name, Decide&& decide) {
    const Place at{name.data(), name.size()};
    if (auto it = seen_.find(at); it != seen_.end()) return it->second;
    if (seen_.size() > 100000) seen_.clear();
    return seen_.emplace(at, decide(name)).first->second;
  }
  void clear() { seen_.clear(); }

 private:
  struct Place {
    const char* data;
    size_t size;
    bool operator==(const Place& o) const { return data == o.data && size == o.size; }
  };
  struct Hash {
    size_t operator()(const Place& p) const { return std::hash<const char*>{}(p.data) ^ p.size; }
  };
  std::unordered_map<Place, Value, Hash> seen_;
};

}  // namespace tlsql
