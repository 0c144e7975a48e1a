// .plot and .html: the pictures and the HTML report, written atomically.
#include <fmt/format.h>

#include <stdexcept>

#include "pictures/pictures.h"
#include "repl/modules.h"
#include "repl/shell.h"
#include "src/output_file.h"
#include "src/sql_assets.h"

namespace tlsql {

namespace {

const PictureFunctions& pictures(const char* needed_for) {
  using Entry = decltype(&tlsql_picture_functions);
  return *reinterpret_cast<Entry>(module_symbol(kPicturesLibrary, kPicturesEntry, needed_for))();
}

}  // namespace

// .plot roofline FILE [kernels] [WHERE ...] | timeline FILE [STEP | A..B] | memory FILE | diff FILE [counts|duration]
// [TOP]
void Shell::plot_command(const std::vector<std::string>& w, const std::string& where) {
  const std::string& kind = w[1];
  const std::string& path = w[2];
  const PictureFunctions& draw = pictures(".plot");
  auto format = draw.chart_format(path);
  if (!format) throw std::runtime_error(fmt::format(".plot: {}: the file name must end in .svg, .png or .csv", path));
  Binder bind = [this](sqlite3_stmt* s) { bind_parameters(s, parameters); };
  Chart chart;
  if (kind == "roofline") {
    chart = draw.roofline_chart(db(), w.size() > 3 && w[3] == "kernels", where, bind, *format, "main");
  } else if (kind == "timeline") {
    if (w.size() > 4) throw std::invalid_argument("usage");
    chart = draw.timeline_chart(db(), w.size() > 3 ? w[3] : "", *format, "main");
  } else if (kind == "memory") {
    if (w.size() > 3) throw std::invalid_argument("usage");
    chart = draw.memory_chart(db(), *format, "main");
  } else if (kind == "diff") {
    bool duration = true;
    int64_t top = 15;
    for (size_t i = 3; i < w.size(); ++i) {
      if (w[i] == "counts" || w[i] == "duration")
        duration = w[i] == "duration";
      else if (char* end; (top = std::strtoll(w[i].c_str(), &end, 10)) < 1 || *end)
        throw std::invalid_argument("usage");
    }
    if (!schema_attached(db(), "other"))
      throw std::runtime_error(".plot diff: no trace to compare with: start with --diff TEST or .attach TEST AS other");
    auto rows = query_all(db(), std::string(sql_asset("report_diff")), parameters);
    chart = draw.diff_chart(rows.at(0), duration, (int)top, *format);
  } else {
    throw std::invalid_argument("usage");
  }
  write_file_atomic(path, chart.bytes);
  if (!quiet) say(stderr, fmt::format("{}: {}\n", path, chart.summary));
}

void Shell::html_command(const std::string& path) {
  // The ops and kernels sections run on a second connection while this one runs the others.
  const std::unique_ptr<Session::Twin> twin = session->twin();
  HtmlReport r = pictures("the HTML report")
                     .html_report(
                         db(), [this](const std::string& sql) { return query_all(db(), sql, parameters); },
                         [this](sqlite3_stmt* s) { bind_parameters(s, parameters); }, twin ? twin->db() : nullptr,
                         [this, &twin](const std::string& sql) { return query_all(twin->db(), sql, parameters); });
  write_file_atomic(path, r.html);
  if (r.problems) ++errors_;  // the page says what is missing; the exit code says so too
  if (!quiet || r.problems)
    say(stderr,
        fmt::format("{}: HTML report, {} KB{}\n", path, (r.html.size() + 1023) / 1024,
                    r.problems ? fmt::format(", {} section(s) could not be produced (see the page)", r.problems) : ""));
}

}  // namespace tlsql
