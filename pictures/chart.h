// Pictures of a loaded trace, drawn with cairo: the roofline, the GPU timeline, the memory
// timeline and the diff charts. Each chart is built from SQL over the session's database into a small model, then
// rendered as SVG or PNG, or written as CSV (the numbers behind the chart).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "session/output.h"
#include "session/report.h"

namespace tlsql {

// inline_image: SVG, or PNG when the SVG would be very large (the HTML report's pictures).
enum class ChartFormat { svg, png, csv, inline_image };
// From the file name's extension (.svg, .png, .csv); nullopt for anything else.
std::optional<ChartFormat> chart_format(const std::string& path);

// Binds the shell's .parameter values to a statement.
using Binder = std::function<void(sqlite3_stmt*)>;

struct Chart {
  std::string bytes;    // the file's content
  std::string summary;  // one line: what was drawn
  ChartFormat format;   // of the bytes: svg, png or csv
};

// Ops (or kernels) at (FLOPs/byte, TFLOP/s) against the memory roof and one compute ceiling per
// dtype and units; `where` is an SQL condition on the op (or kernel) view.
Chart roofline_chart(sqlite3* db, bool kernels, const std::string& where, const Binder& bind, ChartFormat f,
                     const std::string& schema = "main");
// The same in two halves: this call reads the points (SQL; throws as roofline_chart does), the job
// it returns draws them without the connection, so it may run on another thread (the HTML report).
std::function<Chart()> roofline_chart_job(sqlite3* db, bool kernels, const std::string& where, const Binder& bind,
                                          ChartFormat f, const std::string& schema = "main");

// GPU activity per stream. `range`: empty (everything), a step number, or "A..B" (ms from the
// first GPU event).
Chart timeline_chart(sqlite3* db, const std::string& range, ChartFormat f, const std::string& schema = "main");

// Allocated and reserved bytes over time per device, from the trace's [memory] events (view
// memory_event; profile_memory=True), each device's peak marked.
Chart memory_chart(sqlite3* db, ChartFormat f, const std::string& schema = "main");

// HTA's visualize_counts_diff / visualize_duration_diff over the rows of the diff report: the
// `top` names with the largest |difference| (ProfilerStep* left out of the duration chart).
Chart diff_chart(const ResultSet& diff_rows, bool duration, int top, ChartFormat f);
// The name of the diff report's totals rows (sql/report_diff.sql, one per device side): not a
// name of the traces, so no bar; the HTML report shows them after the names.
inline constexpr const char* kDiffTotalName = "(total)";

}  // namespace tlsql
