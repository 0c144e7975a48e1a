// did_you_mean (session/suggest.h): what a mistyped report name, dot-command or kind suggests.
#include "session/suggest.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using tlsql::did_you_mean;

TEST_CASE("did you mean: the nearest name within a third of the typed length, else the one it begins") {
  const std::vector<std::string> reports = {"ops",           "kernels",           "summary", "diff", "diff_tree",
                                            "diff_tree_ops", "diff_tree_summary", "gemm",    "mfu"};
  CHECK(did_you_mean("opps", reports) == "ops");            // one insertion
  CHECK(did_you_mean("kernles", reports) == "kernels");     // two neighbours swapped: one edit
  CHECK(did_you_mean("SUMMARY", reports) == std::nullopt);  // known, whatever the case
  CHECK(did_you_mean("Sumary", reports) == "summary");
  CHECK(did_you_mean("summ", reports) == "summary");  // too far to edit (3 > 4 / 3), but it begins only one
  CHECK(did_you_mean("diff_tree_sumary", reports) == "diff_tree_summary");
  CHECK(did_you_mean("dif", reports) == "diff");  // diff (1 edit) over the longer names it also begins
  CHECK(did_you_mean("zzzz", reports) == std::nullopt);
  CHECK(did_you_mean("", reports) == std::nullopt);
  CHECK(did_you_mean("g", reports) == std::nullopt);  // a single letter begins gemm only, but says too little
  const std::vector<std::string> commands = {".report", ".reports", ".tables", ".tree"};
  CHECK(did_you_mean(".reprot", commands) == ".report");
  CHECK(did_you_mean(".tabels", commands) == ".tables");
  CHECK(did_you_mean(".rep", commands) == std::nullopt);  // begins two: no guess
}
