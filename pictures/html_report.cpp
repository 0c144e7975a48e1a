#include "pictures/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <future>
#include <stdexcept>

#include "pictures/picture_sql.h"
#include "session/report.h"
#include "src/report_fallback.h"
#include "src/sql_assets.h"
#include "udf/perf/perf_table.h"

namespace tlsql {

namespace {

std::string base64(const std::string& in) {
  static const char* abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v = (uint8_t)in[i] << 16 | (uint8_t)in[i + 1] << 8 | (uint8_t)in[i + 2];
    for (int k = 18; k >= 0; k -= 6) out += abc[(v >> k) & 63];
  }
  if (size_t rest = in.size() - i) {
    uint32_t v = (uint8_t)in[i] << 16 | (rest == 2 ? (uint8_t)in[i + 1] << 8 : 0);
    out += abc[(v >> 18) & 63];
    out += abc[(v >> 12) & 63];
    out += rest == 2 ? abc[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

constexpr const char* kStyle = R"(
body { font-family: "DejaVu Sans", "Helvetica Neue", Arial, sans-serif; margin: 0 auto; padding: 0 24px 48px;
       max-width: 1440px; color: #222; background: #fff; }
h1 { font-size: 24px; margin: 24px 0 4px; }
h2 { font-size: 19px; margin: 36px 0 8px; padding-bottom: 4px; border-bottom: 1px solid #ddd; }
h3 { font-size: 15px; margin: 20px 0 6px; }
p, li { font-size: 14px; line-height: 1.45; }
.meta { color: #555; margin: 2px 0; }
nav a { margin-right: 14px; font-size: 14px; color: #2a5db0; }
.scroll { overflow-x: auto; max-height: 640px; overflow-y: auto; border: 1px solid #e2e2e2; }
table { border-collapse: collapse; font-size: 12.5px; }
th, td { padding: 3px 8px; border-bottom: 1px solid #eee; vertical-align: top; text-align: left; }
th { position: sticky; top: 0; background: #f3f5f8; border-bottom: 1px solid #ccc; }
td { max-width: 24em; overflow-wrap: break-word; }
td.text { min-width: 12em; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.null { color: #aaa; }
tr:nth-child(even) td { background: #fafbfc; }
figure { margin: 12px 0 24px; }
figure img { max-width: 100%; height: auto; border: 1px solid #e2e2e2; }
figcaption, .note { font-size: 13px; color: #555; }
.problem { color: #a02020; font-size: 14px; }
code { font-size: 13px; background: #f3f3f3; padding: 1px 4px; }
)";

class Page {
 public:
  void raw(const std::string& s) { body_ += s; }
  void heading(int level, const std::string& text, const std::string& id = "") {
    body_ += fmt::format("<h{0}{1}>{2}</h{0}>\n", level, id.empty() ? "" : " id=\"" + id + "\"", html_escape(text));
  }
  void para(const std::string& text, const char* cls = nullptr) {
    body_ += fmt::format("<p{}>{}</p>\n", cls ? fmt::format(" class=\"{}\"", cls) : "", html_escape(text));
  }
  void problem(const std::string& what, const std::string& why) {
    ++problems;
    para(fmt::format("{} could not be produced: {}", what, why), "problem");
  }
  void table(const ResultSet& rs, size_t max_rows) {
    if (rs.rows.empty()) return para("(no rows)", "note");
    body_ += "<div class=\"scroll\"><table>\n<tr>";
    // Headers may break after an underscore (main_flops_pct): a wide table of short numbers
    // then fits the page, its values stay on one line.
    for (const std::string& c : rs.columns) {
      std::string h = html_escape(c);
      for (size_t at = h.find('_'); at != std::string::npos; at = h.find('_', at + 6)) h.insert(at + 1, "<wbr>");
      body_ += "<th>" + h + "</th>";
    }
    body_ += "</tr>\n";
    for (size_t r = 0; r < rs.rows.size() && r < max_rows; ++r) {
      body_ += "<tr>";
      for (size_t i = 0; i < rs.columns.size(); ++i) {
        const auto& v = rs.rows[r][i];
        if (!v)
          body_ += "<td class=\"null\">NULL</td>";
        else
          body_ += fmt::format("<td class=\"{}\">{}</td>", rs.numeric[i] ? "num" : "text", html_escape(*v));
      }
      body_ += "</tr>\n";
    }
    body_ += "</table></div>\n";
    if (rs.rows.size() > max_rows) para(fmt::format("{} of {} rows shown.", max_rows, rs.rows.size()), "note");
  }
  void image(const Chart& c, const std::string& alt) {
    body_ += fmt::format(
        "<figure><img alt=\"{}\" src=\"data:image/{};base64,{}\"><figcaption>{}</figcaption></figure>\n",
        html_escape(alt), c.format == ChartFormat::png ? "png" : "svg+xml", base64(c.bytes), html_escape(c.summary));
  }
  std::string finish(const std::string& title) const {
    return fmt::format(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n"
        "<style>{}</style>\n</head>\n<body>\n{}</body>\n</html>\n",
        html_escape(title), kStyle, body_);
  }
  void append(const Page& other) {
    body_ += other.body_;
    problems += other.problems;
  }
  int problems = 0;

 private:
  std::string body_;
};

}  // namespace

HtmlReport html_report(sqlite3* db, const Query& query, const Binder& bind, sqlite3* twin, const Query& twin_query) {
  Page page;
  const bool diff = schema_attached(db, "other");
  std::vector<ResultSet> traces;
  try {
    traces = query(picture_sql("html_traces"));
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("html: {}", e.what()));
  }
  std::string name = traces.empty() || traces[0].rows.empty() ? "trace" : traces[0].rows[0][1].value_or("trace");
  name = name.substr(name.find_last_of('/') + 1);
  size_t n_traces = traces.empty() ? 0 : traces[0].rows.size();
  if (n_traces > 1) name += fmt::format(" and {} more", n_traces - 1);

  page.heading(1, "tlsql report: " + name);
  for (const auto& row : traces.empty() ? std::vector<std::vector<std::optional<std::string>>>{} : traces[0].rows)
    page.para(fmt::format("trace {}: {}{}", row[0].value_or(""), row[1].value_or(""),
                          row[2] ? fmt::format(" (rank {} of {})", *row[2], row[3].value_or("?")) : ""),
              "meta");
  if (diff) page.para("compared with the trace attached as `other` (test) — see Diff", "meta");
  page.raw("<nav>");
  if (diff) page.raw("<a href=\"#diff_tree\">Op by op</a>");
  page.raw(
      "<a href=\"#summary\">Summary</a><a href=\"#pictures\">Roofline and timeline</a>"
      "<a href=\"#timeline\">GPU time breakdown</a><a href=\"#ops\">Ops</a><a href=\"#kernels\">Kernels</a>");
  if (diff) page.raw("<a href=\"#diff\">Diff</a>");
  page.raw("</nav>\n");

  // A canned report's result sets, each under its caption.
  // The notes a report says beside its rows (session/report.h: what it covers, why it is empty) are
  // shown under its table, as the shell prints them on stderr; on main only (the notes' SQL reads
  // main). `conn` is the connection `on` runs on.
  auto report_on = [&](const Query& on, sqlite3* conn, Page& into, const std::string& report_name,
                       const std::vector<std::string>& captions, size_t max_rows, const std::string& schema) {
    try {
      // On main, the report that stands in for it on these traces (timeline_ranks for several).
      std::string runs = report_name;
      if (schema == "main")
        if (auto f = report_fallback(db, report_name)) runs = f->report;
      auto sets = on(sql_for("report_" + runs, schema));
      int shown = 0, rows = 0;
      for (size_t i = 0; i < sets.size(); ++i) {
        rows += (int)sets[i].rows.size();
        bool captioned = i < captions.size() && !captions[i].empty();
        if (!captioned && sets[i].rows.empty()) continue;  // e.g. the per-rank table of one trace
        if (captioned) into.heading(3, captions[i]);
        into.table(sets[i], max_rows);
        ++shown;
      }
      if (schema == "main") {
        // (The stand-in's why is the section's own first line: not repeated.)
        const ReportPlan plan{runs, runs, ""};
        for (const ReportNote& n : report_run_notes(conn, plan, {})) into.para(n.report + ": " + n.note, "note");
        if (!rows) {
          into.para(runs + ": " + report_empty_note(conn, plan, {}).note, "note");
          return;
        }
      }
      if (!shown) into.para("(no rows)", "note");
    } catch (const std::exception& e) {
      into.problem("The " + report_name + " report", e.what());
    }
  };
  auto report_into = [&](Page& into, const std::string& report_name, const std::vector<std::string>& captions,
                         size_t max_rows, const std::string& schema) {
    report_on(query, db, into, report_name, captions, max_rows, schema);
  };
  auto report = [&](const std::string& report_name, const std::vector<std::string>& captions, size_t max_rows,
                    const std::string& schema = "main") { report_into(page, report_name, captions, max_rows, schema); };
  auto picture = [&](const char* what, const std::function<Chart()>& make) {
    try {
      page.image(make(), what);
    } catch (const std::exception& e) {
      page.problem(what, e.what());
    }
  };

  // With a diff, the summary and the pictures of both traces, control first.
  const std::vector<std::pair<std::string, std::string>> sides =
      diff ? std::vector<std::pair<std::string, std::string>>{{"main", " — control (main)"},
                                                              {"other", " — test (other)"}}
           : std::vector<std::pair<std::string, std::string>>{{"main", ""}};

  // The perf table (which the diff, summary, roofline, ops and kernels read) is computed on another
  // thread while this one draws the GPU timelines and runs the timeline report, which do not need
  // it; their sections are put in their places below. (A saved database's table is read through
  // SQL: then the first section that needs it makes it, as before.)
  std::vector<std::function<std::shared_ptr<const PerfTable>()>> jobs;
  for (const auto& side : sides)
    if (auto job = perf_table_job(db, side.first, true)) jobs.push_back(std::move(job));
  std::future<void> perf = std::async(std::launch::async, [&jobs] {
    for (auto& job : jobs) job();
  });
  // A side without GPU events (a CPU-only profile) has no GPU timeline, roofline, GPU time
  // breakdown or kernels: those sections say so and count as not produced (docs/pictures.md: the
  // command exits 1); its ops section shows what stands in for the ops report (cpu_ops).
  const std::string no_gpu = "no GPU events (kernels, memcpys, memsets) in this trace";
  std::vector<bool> has_gpu;
  std::vector<Page> timelines;  // per side: its GPU timeline picture, or why there is none
  for (const auto& side : sides) {
    Page& p = timelines.emplace_back();
    const std::string s = side.first;
    auto gpu_events = query(picture_sql("gpu_count", s));
    has_gpu.push_back(!(gpu_events.empty() || gpu_events[0].rows.empty() || gpu_events[0].rows[0][0] == "0"));
    if (!has_gpu.back())
      p.problem("GPU timeline" + side.second, no_gpu);
    else
      try {
        p.image(timeline_chart(db, "", ChartFormat::inline_image, s), "GPU timeline" + side.second);
      } catch (const std::exception& e) {
        p.problem("GPU timeline" + side.second, e.what());
      }
  }
  Page breakdown;  // the GPU time breakdown section
  breakdown.heading(2, "GPU time breakdown", "timeline");
  if (has_gpu[0])
    report_into(breakdown, "timeline", {}, 200, "main");
  else
    breakdown.problem("The GPU time breakdown", no_gpu);
  const std::optional<ReportFallback> ops_instead = report_fallback(db, "ops");
  perf.get();
  // The ops and kernels sections: on the twin connection, on another thread, from here on (its
  // perf tables are the ones just made); else on this one after the rest.
  Page tables;
  auto make_tables = [&](const Query& on, sqlite3* conn) {
    tables.heading(2, "Ops", "ops");
    if (ops_instead) {
      tables.para("The ops report: " + ops_instead->why + ".", "note");
      report_on(on, conn, tables, ops_instead->report, {}, 200, "main");
    } else {
      tables.para("Per op name and category over counted_op (each GPU nanosecond counted once).", "note");
      report_on(on, conn, tables, "ops", {}, 200, "main");
    }
    tables.heading(2, "Kernels", "kernels");
    if (has_gpu[0])
      report_on(on, conn, tables, "kernels", {}, 200, "main");
    else
      tables.problem("The kernels report", no_gpu);
  };
  std::future<void> on_twin;
  if (twin) {
    share_perf_tables(db, twin);
    on_twin = std::async(std::launch::async, [&] { make_tables(twin_query, twin); });
  }
  // With a diff, first what a user comparing two runs asks: which op got slower or faster, matched
  // op by op through the call tree whatever kernels each side ran (.report diff_tree_ops).
  if (diff) {
    page.heading(2, "Op by op (main = control, other = test)", "diff_tree");
    page.para(
        "Each op matched with its counterpart through the call tree; kernels of either side under their lowest "
        "common ancestor, slowest in control first. All columns (shapes, FLOPs, achieved %): .report "
        "diff_tree_ops; per kernel: .report diff_tree.",
        "note");
    try {  // the columns that fit a page
      std::string sql(sql_asset("report_diff_tree_ops"));
      sql.erase(sql.find_last_not_of(" \n;") + 1);
      auto sets = query(
          "SELECT name, lowest_common_ancestor_name, kernel_time_trace1_us, kernel_time_trace2_us, "
          "speedup, delta_us, kernel_names_trace1, kernel_names_trace2 FROM (" +
          sql + ")");
      if (sets.empty() || sets[0].rows.empty())
        page.para("(no rows)", "note");
      else
        page.table(sets[0], 100);
    } catch (const std::exception& e) {
      page.problem("The op-by-op comparison", e.what());
    }
  }
  page.heading(2, "Summary", "summary");
  for (const auto& [schema, label] : sides) report("summary", {"Traces" + label}, 200, schema);
  report("health", {"Health (what the loader repaired or skipped)"}, 200);

  // The rooflines' points are read here and drawn on another thread while the ops and kernels
  // reports run; their section is put in its place when both are done.
  std::vector<std::function<Chart()>> roofline_jobs(sides.size());
  std::vector<std::optional<Chart>> rooflines(sides.size());
  std::vector<std::string> roofline_errors(sides.size());
  for (size_t k = 0; k < sides.size(); ++k) try {
      if (has_gpu[k])
        roofline_jobs[k] = roofline_chart_job(db, false, "", bind, ChartFormat::inline_image, sides[k].first);
      else
        roofline_errors[k] = no_gpu;  // no op has GPU time: no point to draw
    } catch (const std::exception& e) {
      roofline_errors[k] = e.what();
    }
  std::future<void> drawing = std::async(std::launch::async, [&] {
    for (size_t k = 0; k < sides.size(); ++k) try {
        if (roofline_jobs[k]) rooflines[k] = roofline_jobs[k]();
      } catch (const std::exception& e) {
        roofline_errors[k] = e.what();
      }
  });
  if (on_twin.valid())
    on_twin.get();
  else
    make_tables(query, db);
  drawing.get();

  page.heading(2, "Roofline and GPU timeline", "pictures");
  for (size_t k = 0; k < sides.size(); ++k) {
    const std::string what = "Roofline" + sides[k].second;
    if (rooflines[k])
      page.image(*rooflines[k], what);
    else
      page.problem(what, roofline_errors[k]);
    page.append(timelines[k]);
  }
  page.para(
      "Other windows: .plot timeline FILE.svg STEP (or START..END in ms); roofline of a subset: "
      ".plot roofline FILE.svg WHERE op_category(name) = 'GEMM'.",
      "note");

  page.append(breakdown);
  page.append(tables);

  if (diff) {
    page.heading(2, "Diff (main = control, other = test)", "diff");
    try {
      auto rows = query(std::string(sql_asset("report_diff")));
      if (rows.empty()) throw std::runtime_error("the diff report returned nothing");
      picture("Ops duration comparison", [&] { return diff_chart(rows[0], true, 15, ChartFormat::inline_image); });
      picture("Ops count comparison", [&] { return diff_chart(rows[0], false, 15, ChartFormat::inline_image); });
      // The rows that changed most first (the report itself is ordered by name), its totals last.
      ResultSet& rs = rows[0];
      size_t dcol = std::find(rs.columns.begin(), rs.columns.end(), "diff_duration") - rs.columns.begin();
      if (dcol < rs.columns.size())
        std::stable_sort(rs.rows.begin(), rs.rows.end(), [&](const auto& a, const auto& b) {
          auto total = [](const auto& r) { return r[0] && *r[0] == kDiffTotalName; };
          auto v = [&](const auto& r) { return r[dcol] ? std::fabs(std::strtod(r[dcol]->c_str(), nullptr)) : 0.0; };
          return total(a) != total(b) ? total(b) : v(a) > v(b);
        });
      page.heading(3, "Per name, largest |diff_duration| first (.report diff)");
      page.table(rs, 100);
    } catch (const std::exception& e) {
      page.problem("The diff", e.what());
    }
    page.heading(3, "Kernels (.report diff_kernels)");
    report("diff_kernels", {}, 100);
  }
  page.raw(
      "<p class=\"note\">Made by tlsql 0.1.0. Every table is a canned report: "
      "<code>tlsql TRACE --report NAME</code> prints it.</p>\n");
  return {page.finish("tlsql report: " + name), page.problems};
}

}  // namespace tlsql
