// tlsql's own dot-commands: one row each (repl/dot_commands.h) beside its handler. .plot and .html
// are drawn in plot_commands.cpp, .replay and .export-replay run in replay_commands.cpp.
#include <fmt/format.h>

#include <set>
#include <stdexcept>

#include "repl/dot_commands.h"
#include "repl/shell.h"
#include "session/report.h"
#include "udf/diff/tree_diff_sql.h"
#include "udf/tree/tree_access.h"

namespace tlsql {

namespace {

// ns -> µs the way a trace writes them: 45063 -> "45.063", 101200 -> "101.2", 45000 -> "45".
std::string micros(int64_t ns) {
  std::string s = fmt::format("{}.{:03}", ns / 1000, std::abs(ns % 1000));
  if (ns < 0 && ns > -1000) s = "-" + s;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

// JSON as TraceLens prints its Python lists: ", " between items, strings unquoted.
std::string python_list(const std::string& json) {
  std::string out;
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    char c = json[i];
    if (in_string) {
      if (c == '\\' && i + 1 < json.size())
        out += json[++i];
      else if (c == '"')
        in_string = false;
      else
        out += c;
    } else if (c == '"') {
      in_string = true;
    } else {
      out += c;
      if (c == ',') out += ' ';
    }
  }
  return out;
}

// TraceLens's traverse_subtree_and_print: box-drawing branches, "UID: n, Category: c, Name: x"
// and the duration (µs) of GPU events; names over 64 characters are cut with "..".
void print_tree(Shell& sh, int64_t uid, int max_depth, bool all) {
  // With a second trace attached as other, an event that has a counterpart there prints as both
  // trees merged (TraceLens's print_merged_tree): "name" where both sides have it, "combined: a |
  // b" where the names differ, ">> trace1: a" / "<< trace2: b" where one side only, and the uids.
  if (!all)
    if (auto merged = merged_tree(sh.db(), uid, max_depth)) {
      TreeAccess a(sh.db(), "main"), b(sh.db(), "other");
      std::vector<bool> open;  // per depth: the ancestor there has more children below
      for (const MergedRow& r : *merged) {
        open.resize((size_t)r.depth + 1);
        std::string prefix;
        for (int k = 0; k < r.depth; ++k) prefix += open[(size_t)k] ? "│   " : "    ";
        open[(size_t)r.depth] = !r.last;
        auto name = [](TreeAccess& t, std::optional<int64_t> u) {
          auto row = u ? t.row(*u) : std::nullopt;
          std::string n = row ? row->name : "?";
          return n.size() > 64 ? n.substr(0, 64) + ".." : n;
        };
        std::string n1 = r.main ? name(a, r.main) : "", n2 = r.other ? name(b, r.other) : "";
        std::string text = r.main && r.other ? (n1 == n2 ? n1 : "combined: " + n1 + " | " + n2)
                           : r.main          ? ">> trace1: " + n1
                                             : "<< trace2: " + n2;
        std::string uids =
            fmt::format("[{} | {}]", r.main ? std::to_string(*r.main) : "-", r.other ? std::to_string(*r.other) : "-");
        sh.emit(fmt::format("{}{}{}  {}\n", prefix, r.last ? "└── " : "├── ", text, uids));
      }
      return;
    }
  TreeAccess tree(sh.db(), "main");
  auto root = tree.row(uid);
  if (!root) {
    sh.complain(fmt::format(".tree: no event has uid {}", uid));
    return;
  }
  // Which events lead to GPU work: computed bottom-up over the subtree.
  auto below = tree.descendants(uid);
  std::set<int64_t> gpu_path;
  for (auto [u, d] : below)
    if (auto r = tree.row(u); r && is_gpu_work(r->kind))
      for (auto [a, k] : tree.ancestors(u)) {
        if (!gpu_path.insert(a).second) break;
        if (a == uid) break;
      }
  bool prune = !all && gpu_path.count(uid);
  // Depth-first with an explicit stack: the input decides how deep the tree goes (a chain of
  // 20,000 nested events is a 3 MB file), so no recursion.
  struct Item {
    TreeRow row;
    std::string prefix;
    bool last;
    int depth;
  };
  std::vector<Item> stack{{*root, "", true, 0}};
  while (!stack.empty() && !interrupted()) {
    Item it = std::move(stack.back());
    stack.pop_back();
    const TreeRow& r = it.row;
    std::string name = r.name.size() > 64 ? r.name.substr(0, 64) + ".." : r.name;
    std::string line = fmt::format("{}{}UID: {}, Category: {}, Name: {}", it.prefix, it.last ? "└── " : "├── ", r.uid,
                                   r.cat.empty() ? r.kind : r.cat, name);
    if (is_gpu_work(r.kind) && r.has_time) line += ", Duration: " + micros(r.end - r.ts);
    sh.emit(line + "\n");
    if (it.depth >= max_depth) continue;
    std::vector<TreeRow> kids;
    for (int64_t k : tree.children(r.uid))
      if (k == uid) {  // a parent loop (a database tlsql did not write): it must pass through uid
        sh.complain(fmt::format(".tree: the parent links loop through uid {}", uid));
        return;
      } else if (auto kr = tree.row(k); kr && (!prune || gpu_path.count(k) || is_gpu_work(kr->kind)))
        kids.push_back(*kr);
    std::string prefix = it.prefix + (it.last ? "    " : "│   ");
    for (size_t i = kids.size(); i-- > 0;) stack.push_back({kids[i], prefix, i + 1 == kids.size(), it.depth + 1});
  }
  if (std::string e = tree.take_walk_error(); !e.empty()) {
    sh.complain(fmt::format(".tree: {}", e));
  }
}

// TraceLens's traverse_parents_and_print, with Input Dims / Input type for ops.
void print_stack(Shell& sh, int64_t uid) {
  TreeAccess tree(sh.db(), "main");
  auto r = tree.row(uid);
  if (!r) {
    sh.complain(fmt::format(".stack: no event has uid {}", uid));
    return;
  }
  std::vector<int64_t> chain{uid};
  for (auto [a, d] : tree.ancestors(uid)) chain.push_back(a);  // stops at a parent loop
  if (std::string e = tree.take_walk_error(); !e.empty()) {
    sh.complain(fmt::format(".stack: {}", e));
    return;
  }
  for (size_t up = 0; up < chain.size() && !interrupted(); ++up) {
    if (up > 0) r = tree.row(chain[up]);
    if (!r) break;
    sh.emit(fmt::format("{}\n", up == 0 ? std::string("Node:") : fmt::format("{}-up:", up)));
    std::string name = r->name.size() > 64 ? r->name.substr(0, 64) + ".." : r->name;
    std::string line =
        fmt::format("  UID: {}, Category: {}, Name: {}", r->uid, r->cat.empty() ? r->kind : r->cat, name);
    if (is_gpu_work(r->kind) && r->has_time) line += ", Duration: " + micros(r->end - r->ts);
    sh.emit(line + "\n");
    if (r->kind == "cpu_op")
      for (const char* key : {"Input Dims", "Input type"}) {
        std::string v = tree.arg(r->uid, key);
        if (!v.empty()) sh.emit(fmt::format("  {}: {}\n", key, python_list(v)));
      }
  }
}

void report(Shell& sh, const DotCall& c) { sh.run_report(c.arg(1)); }

void reports(Shell& sh, const DotCall&) {
  size_t width = 0;  // the longest name and two spaces (launch_outliers ran into its text)
  for (const std::string& name : report_names()) width = std::max(width, name.size() + 2);
  for (const std::string& name : report_names())
    sh.emit(wrap_hanging(name, report_summary(name), width, sh.terminal_width()));
}

void tree(Shell& sh, const DotCall& c) {
  int64_t uid, depth = INT32_MAX;
  if (!parse_int(c.arg(1), uid)) throw UsageError{};
  bool all = false;
  for (size_t i = 2; i < c.words.size(); ++i) {
    if (c.words[i] == "all")
      all = true;
    else if (!parse_int(c.words[i], depth))
      throw std::runtime_error(fmt::format(".tree: '{}' is not a depth", c.words[i]));
  }
  print_tree(sh, uid, (int)depth, all);
}

void stack(Shell& sh, const DotCall& c) {
  int64_t uid;
  if (!parse_int(c.arg(1), uid)) throw UsageError{};
  print_stack(sh, uid);
}

void replay(Shell& sh, const DotCall& c) {
  int64_t uid, n[2] = {100, 10};
  if (!parse_int(c.arg(1), uid)) throw UsageError{};
  size_t i = 2;
  std::string device;
  if (c.arg(i) == "cuda" || c.arg(i) == "cpu") device = c.arg(i++);
  for (int k = 0; i < c.words.size(); ++i, ++k)
    if (k > 1 || !parse_int(c.words[i], n[k])) throw UsageError{};
  if (n[0] < 1 || n[1] < 0) throw UsageError{};
  sh.replay_command(uid, device, (int)n[0], (int)n[1]);
}

void export_replay(Shell& sh, const DotCall& c) {
  auto where = where_after(c.line, 2);
  if (!where) throw UsageError{};
  sh.export_replay(c.words[1], *where);
}

void plot(Shell& sh, const DotCall& c) {
  const char* usage =
      ".plot roofline FILE [kernels] [WHERE ...] | timeline FILE [STEP | START..END] | memory FILE | diff FILE "
      "[counts|duration] [TOP]   (FILE: .svg, .png or .csv)";
  static const std::vector<std::string> kinds = {"roofline", "timeline", "memory", "diff"};
  const auto& w = c.words;
  if (w.size() > 1 && std::find(kinds.begin(), kinds.end(), w[1]) == kinds.end())
    throw std::runtime_error(fmt::format("no plot kind '{}': {}{}", w[1], maybe_meant(w[1], kinds), usage));
  std::optional<std::string> where = "";
  if (c.arg(1) == "roofline") where = where_after(c.line, c.arg(3) == "kernels" ? 4 : 3);
  if (w.size() < 3 || !where) throw std::runtime_error(usage);
  try {
    sh.plot_command(w, *where);
  } catch (const std::invalid_argument&) {
    throw std::runtime_error(usage);
  }
}

}  // namespace

std::vector<DotCommand> tlsql_command_rows() {
  using C = DotCommand::Complete;
  // clang-format off
  return {
    {{".export-replay"}, {{"FILE [WHERE ...]", "write the replay IR of the ops (default: counted_op) to FILE.json,\n"
                           "identical IRs merged with a count; FILE.zip adds a README (tlsql-replay FILE)"}},
     export_replay, 1, -1, C::files},
    {{".html"}, {{"FILE.html", "write a self-contained HTML report: summary, timeline, ops, kernels, roofline\n"
                  "and GPU timeline pictures (and the diff when a trace is attached as other)"}},
     [](Shell& sh, const DotCall& c) { sh.html_command(c.words[1]); }, 1, 1, C::files},
    {{".overlay"}, {{"FILE.json", "write the trace with its critical path marked, for Perfetto (@annotation,\n"
                     "@instance, @rank as the critical_path report; @counters 'queue_length,memory_bw'\n"
                     "or 'all': counter tracks too; @critical_path 0: no path)"}},
     [](Shell& sh, const DotCall& c) { sh.overlay_command(c.words[1]); }, 1, 1, C::files},
    {{".plot"}, {{"roofline FILE [kernels] [WHERE ...]", "ops (or kernels) against the GPU's roofline"},
                 {"timeline FILE [STEP | START..END]", "GPU streams over time (END, START: ms from the first GPU event)"},
                 {"memory FILE", "allocated / reserved bytes over time per device ([memory] events)"},
                 {"diff FILE [counts|duration] [TOP]", "control vs test per name (needs a trace attached as other)\n"
                  "FILE: .svg or .png picture, or .csv with the numbers behind it"}},
     plot, 0, -1, C::files},
    {{".replay"}, {{"UID [cuda|cpu] [N [W]]", "re-run op UID alone through LibTorch (N iterations after W warm-up;\n"
                    "100 and 10): its arguments, mean / median / min µs, the traced time of the op"}},
     replay, 1, 4},
    {{".report"}, {{"NAME", "run a canned report (.reports lists them)"}}, report, 0, 1, C::reports},
    {{".reports"}, {{"", "list the canned reports"}}, reports, 0, 0},
    {{".stack"}, {{"UID", "the chain from UID up to its root, with op shapes (TraceLens style)"}}, stack, 1, 1},
    {{".tree"}, {{"UID [DEPTH] [all]", "the subtree under UID (TraceLens style); branches without GPU work are\n"
                  "left out unless `all` is given or UID itself launches none"}},
     tree, 1, 3},
  };
  // clang-format on
}

}  // namespace tlsql
