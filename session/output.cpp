#include "session/output.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace tlsql {

std::optional<OutputMode> parse_mode(const std::string& name) {
  if (name == "box") return OutputMode::box;
  if (name == "table") return OutputMode::table;
  if (name == "markdown") return OutputMode::markdown;
  if (name == "csv") return OutputMode::csv;
  if (name == "json") return OutputMode::json;
  if (name == "line") return OutputMode::line;
  return std::nullopt;
}

const char* mode_name(OutputMode m) {
  switch (m) {
    case OutputMode::box: return "box";
    case OutputMode::table: return "table";
    case OutputMode::markdown: return "markdown";
    case OutputMode::csv: return "csv";
    case OutputMode::json: return "json";
    case OutputMode::line: return "line";
  }
  return "?";
}

int collect_rows(sqlite3_stmt* stmt, ResultSet& out) {
  int n = sqlite3_column_count(stmt);
  out.columns.clear();
  out.rows.clear();
  out.numeric.assign(n, true);
  for (int i = 0; i < n; ++i) out.columns.emplace_back(sqlite3_column_name(stmt, i));
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    auto& row = out.rows.emplace_back(n);
    for (int i = 0; i < n; ++i) {
      int type = sqlite3_column_type(stmt, i);
      if (type == SQLITE_NULL) continue;
      if (type != SQLITE_INTEGER && type != SQLITE_FLOAT) out.numeric[i] = false;
      const unsigned char* t = sqlite3_column_text(stmt, i);
      row[i] = std::string(reinterpret_cast<const char*>(t), sqlite3_column_bytes(stmt, i));
    }
  }
  return rc;
}

namespace {

// Display width in terminal columns: UTF-8 continuation bytes take no column.
size_t display_width(const std::string& s) {
  size_t w = 0;
  for (unsigned char c : s) w += (c & 0xC0) != 0x80;
  return w;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    q += c;
    if (c == '"') q += '"';
  }
  q += '"';
  return q;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20)
          out += fmt::format("\\u{:04x}", c);
        else
          out += (char)c;
    }
  }
  return out + "\"";
}

// Cells shown in aligned modes: control characters would break the grid.
std::string visible(const std::string& s) {
  std::string out;
  for (unsigned char c : s) out += c < 0x20 ? ' ' : (char)c;
  return out;
}

void print_aligned(FILE* out, const ResultSet& rs, OutputMode mode, bool headers) {
  size_t n = rs.columns.size();
  std::vector<std::vector<std::string>> cells;
  cells.reserve(rs.rows.size());
  std::vector<size_t> width(n, 0);
  if (headers || mode == OutputMode::markdown)
    for (size_t i = 0; i < n; ++i) width[i] = display_width(rs.columns[i]);
  for (const auto& row : rs.rows) {
    auto& c = cells.emplace_back(n);
    for (size_t i = 0; i < n; ++i) {
      c[i] = row[i] ? visible(*row[i]) : "";
      width[i] = std::max(width[i], display_width(c[i]));
    }
  }
  const bool box = mode == OutputMode::box;
  auto rule = [&](const char* l, const char* m, const char* r, const char* h) {
    std::string s = l;
    for (size_t i = 0; i < n; ++i) {
      for (size_t k = 0; k < width[i] + 2; ++k) s += h;
      s += i + 1 < n ? m : r;
    }
    fmt::print(out, "{}\n", s);
  };
  auto line = [&](const std::vector<std::string>& v, bool header) {
    const char* bar = box ? "│" : "|";
    std::string s = bar;
    for (size_t i = 0; i < n; ++i) {
      size_t pad = width[i] - display_width(v[i]);
      bool right = !header && rs.numeric[i];
      s += ' ';
      if (right) s.append(pad, ' ');
      s += v[i];
      if (!right) s.append(pad, ' ');
      s += ' ';
      s += bar;
    }
    fmt::print(out, "{}\n", s);
  };
  if (mode == OutputMode::markdown) {
    line(rs.columns, true);
    std::string s = "|";
    for (size_t i = 0; i < n; ++i) {
      s.append(width[i] + 1, '-');
      s.append(rs.numeric[i] ? ":|" : "-|");
    }
    fmt::print(out, "{}\n", s);
    for (const auto& c : cells) line(c, false);
    return;
  }
  if (box)
    rule("┌", "┬", "┐", "─");
  else
    rule("+", "+", "+", "-");
  if (headers) {
    line(rs.columns, true);
    if (box)
      rule("├", "┼", "┤", "─");
    else
      rule("+", "+", "+", "-");
  }
  for (const auto& c : cells) line(c, false);
  if (box)
    rule("└", "┴", "┘", "─");
  else
    rule("+", "+", "+", "-");
}

}  // namespace

void print_result(FILE* out, const ResultSet& rs, OutputMode mode, bool headers) {
  if (rs.columns.empty() || rs.rows.empty()) return;  // as the sqlite3 shell: no rows, no output
  switch (mode) {
    case OutputMode::box:
    case OutputMode::table:
    case OutputMode::markdown: print_aligned(out, rs, mode, headers); return;
    case OutputMode::csv: {
      auto emit = [&](auto get) {
        std::string s;
        for (size_t i = 0; i < rs.columns.size(); ++i) {
          if (i) s += ',';
          s.append(get(i));
        }
        s += "\n";  // LF, not RFC 4180 CRLF: friendlier to Unix pipelines; csv readers take both
        fwrite(s.data(), 1, s.size(), out);
      };
      if (headers) emit([&](size_t i) { return csv_field(rs.columns[i]); });
      for (const auto& row : rs.rows) emit([&](size_t i) { return row[i] ? csv_field(*row[i]) : std::string(); });
      return;
    }
    case OutputMode::json: {
      std::string s = "[";
      for (size_t r = 0; r < rs.rows.size(); ++r) {
        s += r ? ",\n{" : "{";
        for (size_t i = 0; i < rs.columns.size(); ++i) {
          const auto& v = rs.rows[r][i];
          if (i) s += ',';
          s.append(json_string(rs.columns[i]));
          s += ':';
          s += !v ? "null" : rs.numeric[i] ? *v : json_string(*v);
        }
        s += "}";
      }
      s += "]\n";
      fwrite(s.data(), 1, s.size(), out);
      return;
    }
    case OutputMode::line: {
      size_t w = 0;
      for (const auto& c : rs.columns) w = std::max(w, display_width(c));
      for (size_t r = 0; r < rs.rows.size(); ++r) {
        if (r) fmt::print(out, "\n");
        for (size_t i = 0; i < rs.columns.size(); ++i)
          fmt::print(out, "{:>{}} = {}\n", rs.columns[i], w, rs.rows[r][i] ? *rs.rows[r][i] : "");
      }
      return;
    }
  }
}

int print_statement(FILE* out, sqlite3_stmt* stmt, OutputMode mode, bool headers, bool shape_when_empty,
                    int64_t* rows_out) {
  if (mode == OutputMode::box || mode == OutputMode::table || mode == OutputMode::markdown) {
    ResultSet rs;
    int rc = collect_rows(stmt, rs);
    if (rc == SQLITE_DONE) print_result(out, rs, mode, headers);
    if (rows_out) *rows_out = (int64_t)rs.rows.size();
    return rc;
  }
  const int n = sqlite3_column_count(stmt);
  std::vector<std::string> names;
  size_t name_width = 0;
  for (int i = 0; i < n; ++i) {
    names.emplace_back(sqlite3_column_name(stmt, i));
    name_width = std::max(name_width, display_width(names.back()));
  }
  auto text = [&](int i) {
    return std::string(reinterpret_cast<const char*>(sqlite3_column_text(stmt, i)), sqlite3_column_bytes(stmt, i));
  };
  std::string s;
  int64_t rows = 0;
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    s.clear();
    switch (mode) {
      case OutputMode::csv:
        if (rows == 0 && headers) {
          for (int i = 0; i < n; ++i) {
            if (i) s += ',';
            s += csv_field(names[i]);
          }
          s += '\n';
        }
        for (int i = 0; i < n; ++i) {
          if (i) s += ',';
          if (sqlite3_column_type(stmt, i) != SQLITE_NULL) s += csv_field(text(i));
        }
        s += '\n';  // LF, not RFC 4180 CRLF: friendlier to Unix pipelines; csv readers take both
        break;
      case OutputMode::json:
        s += rows ? ",\n{" : "[{";
        for (int i = 0; i < n; ++i) {
          int type = sqlite3_column_type(stmt, i);
          if (i) s += ',';
          s += json_string(names[i]);
          s += ':';
          // Numbers as numbers, cell by cell (a column may mix types); non-finite REALs as null.
          if (type == SQLITE_NULL)
            s += "null";
          else if (type == SQLITE_INTEGER)
            s += text(i);
          else if (type == SQLITE_FLOAT)
            s += std::isfinite(sqlite3_column_double(stmt, i)) ? text(i) : "null";
          else
            s += json_string(text(i));
        }
        s += '}';
        break;
      default:  // line
        if (rows) s += '\n';
        for (int i = 0; i < n; ++i)
          s += fmt::format("{:>{}} = {}\n", names[i], name_width,
                           sqlite3_column_type(stmt, i) == SQLITE_NULL ? std::string() : text(i));
    }
    ++rows;
    fwrite(s.data(), 1, s.size(), out);
  }
  if (mode == OutputMode::json && rows) fputs("]\n", out);  // closed even after an error: still JSON
  if (rc == SQLITE_DONE && !rows && shape_when_empty && n > 0) {
    if (mode == OutputMode::json) fputs("[]\n", out);
    if (mode == OutputMode::csv && headers) {
      std::string s;
      for (int i = 0; i < n; ++i) {
        if (i) s += ',';
        s += csv_field(names[i]);
      }
      s += '\n';
      fwrite(s.data(), 1, s.size(), out);
    }
  }
  if (rows_out) *rows_out = rows;
  return rc;
}

}  // namespace tlsql
