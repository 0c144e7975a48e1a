// The pictures layer as the shell reaches it: libtlsql_pictures.so, loaded when a command draws
// (.plot, .html, --html). cairo and the libraries it brings (pixman, freetype, fontconfig, X11,
// xcb, png) are ~1.7 MiB of a process's memory once mapped; linked into tlsql they were in every
// command's peak, drawing or not (docs/performance.md, "Libraries loaded when used").
#pragma once

#include <optional>
#include <string>

#include "pictures/chart.h"
#include "pictures/html_report.h"

namespace tlsql {

// Each entry is the function of the same name in chart.h / html_report.h.
struct PictureFunctions {
  std::optional<ChartFormat> (*chart_format)(const std::string& path);
  Chart (*roofline_chart)(sqlite3* db, bool kernels, const std::string& where, const Binder& bind, ChartFormat f,
                          const std::string& schema);
  Chart (*timeline_chart)(sqlite3* db, const std::string& range, ChartFormat f, const std::string& schema);
  Chart (*memory_chart)(sqlite3* db, ChartFormat f, const std::string& schema);
  Chart (*diff_chart)(const ResultSet& diff_rows, bool duration, int top, ChartFormat f);
  HtmlReport (*html_report)(sqlite3* db, const Query& query, const Binder& bind, sqlite3* twin,
                            const Query& twin_query);
};

inline constexpr const char* kPicturesLibrary = "libtlsql_pictures.so";
inline constexpr const char* kPicturesEntry = "tlsql_picture_functions";

}  // namespace tlsql

// The library's one exported entry (named by kPicturesEntry): its table, which lives as long as
// the process.
extern "C" const tlsql::PictureFunctions* tlsql_picture_functions();
