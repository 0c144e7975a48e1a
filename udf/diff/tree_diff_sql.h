// The structural diff for the shell: the merged subtree of a matched event (tree_diff.h).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tlsql {

struct MergedRow {
  int depth;
  bool last;                           // the last child of its parent
  std::optional<int64_t> main, other;  // the event's uid on each side (none: that side lacks it)
};

// The merged subtree below `uid` of main and its counterpart in other, depth-first, down to
// `max_depth`; nullopt when other is not attached or uid has no counterpart. Throws
// std::runtime_error when the diff cannot be made.
std::optional<std::vector<MergedRow>> merged_tree(sqlite3* db, int64_t uid, int max_depth);

}  // namespace tlsql
