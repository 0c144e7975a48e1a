// "Did you mean" for a name the user typed that is not one of the known ones (report names,
// dot-commands, .plot kinds, modes): the one closest to it, when it is close enough to be what
// was meant.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tlsql {

// The known name `typed` most likely meant: the nearest by edit distance (insertions, deletions,
// substitutions and swaps of two neighbours, letter case ignored) within a third of its length
// (at least 1: "opps" -> "ops", "rooflne" -> "roofline"), else the one name it begins (at least 2
// characters: "summ" -> "summary"). Ties go to the name that begins with `typed`, then to the
// first in `known`. nullopt when none is that close, or `typed` is itself known.
std::optional<std::string> did_you_mean(const std::string& typed, const std::vector<std::string>& known);

}  // namespace tlsql
