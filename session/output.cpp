#include "session/output.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>

#include "src/sql_names.h"

namespace tlsql {

namespace {

struct ModeName {
  OutputMode mode;
  const char* name;
};
constexpr ModeName kModes[] = {
    {OutputMode::box, "box"},       {OutputMode::table, "table"},   {OutputMode::markdown, "markdown"},
    {OutputMode::column, "column"}, {OutputMode::csv, "csv"},       {OutputMode::json, "json"},
    {OutputMode::line, "line"},     {OutputMode::list, "list"},     {OutputMode::tabs, "tabs"},
    {OutputMode::html, "html"},     {OutputMode::insert, "insert"}, {OutputMode::quote, "quote"}};

bool aligned(OutputMode m) {
  return m == OutputMode::box || m == OutputMode::table || m == OutputMode::markdown || m == OutputMode::column;
}

}  // namespace

std::optional<OutputMode> parse_mode(const std::string& name) {
  for (const ModeName& m : kModes)
    if (name == m.name) return m.mode;
  return std::nullopt;
}

const char* mode_name(OutputMode mode) {
  for (const ModeName& m : kModes)
    if (mode == m.mode) return m.name;
  return "?";
}

const std::vector<std::string>& mode_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const ModeName& m : kModes) v.emplace_back(m.name);
    return v;
  }();
  return names;
}

int collect_rows(sqlite3_stmt* stmt, ResultSet& out) {
  int n = sqlite3_column_count(stmt);
  out.columns.clear();
  out.rows.clear();
  out.is_real.clear();
  out.numeric.assign(n, true);
  for (int i = 0; i < n; ++i) out.columns.emplace_back(sqlite3_column_name(stmt, i));
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    auto& row = out.rows.emplace_back(n);
    auto& real = out.is_real.emplace_back(n, false);
    for (int i = 0; i < n; ++i) {
      int type = sqlite3_column_type(stmt, i);
      if (type == SQLITE_NULL) continue;
      if (type != SQLITE_INTEGER && type != SQLITE_FLOAT) out.numeric[i] = false;
      real[i] = type == SQLITE_FLOAT;
      if (real[i]) {
        row[i] = sqlite_real_text(sqlite3_column_double(stmt, i));
        continue;
      }
      const unsigned char* t = sqlite3_column_text(stmt, i);
      row[i] = std::string(reinterpret_cast<const char*>(t), sqlite3_column_bytes(stmt, i));
    }
  }
  return rc;
}

std::string sqlite_real_text(double v) {
  // SQLite's printf puts no sign on -0.0 (it tests `< 0`), and 0 has no digits to_chars would give.
  if (v == 0) return "0.0";
  // Where a normal double's shortest round-trip digits number 15 or fewer, SQLite's rounding to 15
  // significant digits gives exactly those digits (the double is within half an ulp of them, far
  // inside half a unit of the 15th digit; SQLite computes them in long double), laid out as
  // %!.15g lays them: plain from 1e-4 to under 1e15 with at least one digit after the point, else
  // d.ddd with an exponent of at least two digits. Formatting REALs through SQLite's printf was
  // half of a large report's output time (diff_tree_ops: 430,000 values on the 200 MB control
  // trace). The rest still goes through it: 16 or 17 digits, infinities, and subnormals (whose
  // ulp is no longer small beside their 15th digit).
  char d[40];
  if (std::isfinite(v) && std::fabs(v) >= std::numeric_limits<double>::min()) {
    const auto [end, ec] = std::to_chars(d, d + sizeof d, v, std::chars_format::scientific);  // -d.ddde-XX
    if (ec == std::errc()) {
      const std::string_view text(d, (size_t)(end - d));
      const size_t e = text.find('e');
      const bool neg = text[0] == '-';
      std::string digits;
      for (char c : text.substr(neg, e - neg))
        if (c != '.') digits += c;
      int exp = 0;
      std::from_chars(text.data() + e + 1 + (text[e + 1] == '+'), end, exp);
      if (digits.size() <= 15) {
        std::string out = neg ? "-" : "";
        if (exp < -4 || exp > 14) {
          out += digits[0];
          out += '.';
          out += digits.size() > 1 ? digits.substr(1) : "0";
          out += exp < 0 ? "e-" : "e+";
          const int a = std::abs(exp);
          if (a < 10) out += '0';
          out += std::to_string(a);
        } else if (exp >= 0) {
          const size_t whole = (size_t)exp + 1;
          out += digits.substr(0, whole);
          if (digits.size() < whole) out.append(whole - digits.size(), '0');
          out += '.';
          out += digits.size() > whole ? digits.substr(whole) : "0";
        } else {
          out += "0.";
          out.append((size_t)(-exp - 1), '0');
          out += digits;
        }
        return out;
      }
    }
  }
  char buf[64];
  sqlite3_snprintf(sizeof buf, buf, "%!.15g", v);
  return buf;
}

std::string readable_real(double v) {
  if (!std::isfinite(v)) return fmt::format("{}", v);
  const double a = std::fabs(v);
  if (a == 0) return "0.0";
  // 3 decimals from 1 up; below 1, 3 significant digits (0.000038, not 3.8e-05 beside 13214.18).
  const int decimals = a >= 1 ? 3 : std::min(15, 2 - (int)std::floor(std::log10(a)));
  std::string s = fmt::format("{:.{}f}", v, decimals);
  while (s.back() == '0' && s[s.size() - 2] != '.') s.pop_back();
  // Thousands separators in the integer part.
  const size_t start = s[0] == '-' ? 1 : 0, point = s.find('.');
  std::string out = s.substr(0, start);
  for (size_t i = start; i < point; ++i) {
    out += s[i];
    const size_t left = point - i - 1;
    if (left && left % 3 == 0) out += ',';
  }
  return out + s.substr(point);
}

namespace {

// A ResultSet made by hand (the charts' CSV) may leave `numeric` and `is_real` empty: then text.
bool numeric(const ResultSet& rs, size_t i) { return i < rs.numeric.size() && rs.numeric[i]; }
bool real(const ResultSet& rs, size_t r, size_t i) {
  return r < rs.is_real.size() && i < rs.is_real[r].size() && rs.is_real[r][i];
}

// Display width in terminal columns: UTF-8 continuation bytes take no column.
size_t display_width(const std::string& s) {
  size_t w = 0;
  for (unsigned char c : s) w += (c & 0xC0) != 0x80;
  return w;
}

// Whether a break may follow this byte: after a blank or punctuation that separates the parts of
// a kernel name, a shape list or a column name.
bool break_after(char c) {
  return c == ' ' || c == ',' || c == '_' || c == '/' || c == ':' || c == ';' || c == '(' || c == '<' || c == '|' ||
         c == '-' || c == '.';
}

}  // namespace

std::vector<std::string> wrap_cell(const std::string& s, size_t width, size_t max_lines) {
  if (!width || display_width(s) <= width) return {s};
  std::vector<std::string> out;
  size_t at = 0;
  while (at < s.size()) {
    const bool last = max_lines && out.size() + 1 == max_lines;
    // The bytes of the next `width` columns (never a UTF-8 character split).
    size_t end = at, cols = 0, brk = std::string::npos;
    while (end < s.size()) {
      const bool starts = ((unsigned char)s[end] & 0xC0) != 0x80;
      if (starts && cols == width) break;
      cols += starts;
      if (break_after(s[end])) brk = end + 1;
      ++end;
    }
    while (end < s.size() && ((unsigned char)s[end] & 0xC0) == 0x80) ++end;
    if (end >= s.size()) {
      out.push_back(s.substr(at));
      break;
    }
    if (last) {  // text is left out: the piece ends in an ellipsis, within the width
      size_t cut = end;
      do --cut;  // drop one character for the ellipsis
      while (cut > at && ((unsigned char)s[cut] & 0xC0) == 0x80);
      out.push_back(s.substr(at, cut - at) + "\xE2\x80\xA6");
      break;
    }
    // A break in the piece's second half; else the piece is cut at the width.
    if (brk != std::string::npos && brk > at && display_width(s.substr(at, brk - at)) * 2 > width) end = brk;
    out.push_back(s.substr(at, end - at));
    at = end;
  }
  return out;
}

bool looks_numeric(std::string_view s) {
  size_t i = 0, digits = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  for (; i < s.size() && (std::isdigit((unsigned char)s[i]) || (s[i] == ',' && digits)); ++i) digits += s[i] != ',';
  if (i < s.size() && s[i] == '.')
    for (++i; i < s.size() && std::isdigit((unsigned char)s[i]); ++i) ++digits;
  if (!digits) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    size_t j = i + 1;
    if (j < s.size() && (s[j] == '-' || s[j] == '+')) ++j;
    if (j == s.size() || !std::isdigit((unsigned char)s[j])) return false;
    for (i = j; i < s.size() && std::isdigit((unsigned char)s[i]); ++i) {
    }
  }
  if (i < s.size() && s[i] == '%') ++i;
  return i == s.size();
}

namespace {

// Appends `s` as one CSV field: quoted, its quotes doubled, when it holds a comma, a quote or a
// line break (runs between quotes copied whole: a diff report writes hundreds of MB of quoted
// JSON lists).
void append_csv(std::string& out, std::string_view s) {
  // (One pass over the bytes: string_view::find_first_of calls memchr on its set for every byte,
  // a seventh of diff_tree's output time.)
  bool plain = true;
  for (const char c : s)
    if (c == ',' || c == '"' || c == '\r' || c == '\n') {
      plain = false;
      break;
    }
  if (plain) {
    out += s;
    return;
  }
  out += '"';
  for (size_t at = 0;;) {
    const size_t q = s.find('"', at);
    out.append(s.substr(at, q == std::string_view::npos ? q : q + 1 - at));
    if (q == std::string_view::npos) break;
    out += '"';
    at = q + 1;
  }
  out += '"';
}

// `s` as a JSON string; with `all_controls` DEL and C1 controls (U+0080 .. U+009F) are \u
// escapes too (the same JSON value: a terminal never sees them raw).
std::string json_string(const std::string& s, bool all_controls = false) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = (unsigned char)s[i];
    if (all_controls && (c == 0x7f || (c == 0xc2 && i + 1 < s.size() && (unsigned char)s[i + 1] >= 0x80 &&
                                       (unsigned char)s[i + 1] < 0xa0))) {
      out += fmt::format("\\u{:04x}", c == 0x7f ? 0x7f : (unsigned char)s[++i]);
      continue;
    }
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

}  // namespace

std::string sql_identifier(const std::string& name) {
  // Quoted unless plain: letters, digits and _, not first a digit, not a keyword (sqlite3's
  // default insert table, "table", is one).
  bool plain =
      !name.empty() && !std::isdigit((unsigned char)name[0]) && !sqlite3_keyword_check(name.data(), (int)name.size());
  for (char c : name) plain = plain && (std::isalnum((unsigned char)c) || c == '_');
  return plain ? name : quote_identifier(name);
}

bool json_value(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || (text[first] != '[' && text[first] != '{')) return false;
  return nlohmann::json::accept(text);
}

std::string wrap_hanging(const std::string& lead, const std::string& text, size_t indent, size_t width) {
  std::string out = lead;
  size_t col = display_width(lead);
  const size_t first = lead.empty() || col < indent ? indent : col + 2;
  out.append(first - col, ' ');
  col = first;
  bool line_start = true;  // nothing written on this line after the indent
  for (size_t at = 0; at < text.size();) {
    const size_t end = std::min(text.find(' ', at), text.size());
    const std::string word = text.substr(at, end - at);
    at = end + 1;
    if (word.empty()) continue;
    const size_t w = display_width(word);
    if (width && !line_start && col + 1 + w > width) {
      out += '\n';
      out.append(indent, ' ');
      col = indent, line_start = true;
    }
    if (!line_start) out += ' ', ++col;
    out += word, col += w, line_start = false;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out + '\n';
}

std::string html_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  return out;
}

namespace {

std::string sql_string(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    out += c;
    if (c == '\'') out += '\'';
  }
  return out + "'";
}

// Cells and names shown in aligned modes (for reading, wherever they go): a newline or tab would
// break the grid (a space instead), other control characters are shown (show_controls);
// markdown escapes its column bar.
std::string visible(const std::string& s, bool markdown) {
  std::string out;
  for (char c : s) {
    if (markdown && c == '|') out += '\\';
    out += c == '\n' || c == '\t' || c == '\r' ? ' ' : c;
  }
  return show_controls(out);
}

// The terminal's share of a cut text column: at least kMinText columns (or all of a shorter
// text), at least kMinHeader of its header, at most kFitLines lines a cell.
constexpr size_t kMinText = 8, kMinHeader = 5, kFitLines = 3;

// The widest piece of a column name between breaks after '_' or ' ' ("achieved_pct": 9).
size_t longest_word(const std::string& name) {
  size_t best = 0, at = 0;
  for (size_t i = 0; i <= name.size(); ++i)
    if (i == name.size() || name[i] == '_' || name[i] == ' ') {
      best = std::max(best, display_width(name.substr(at, i + 1 - at)));
      at = i + 1;
    }
  return best;
}

// A table too wide for the terminal even with its text cut to kMinText (its numbers alone are
// wider): each row as a block of "name = value" lines (line mode's layout, the names right-
// aligned), a blank line between rows; values wrap at the width under their first line, numbers
// whole, text cut to kFitLines lines as in a table (.mode line shows it whole).
void print_fitted_lines(FILE* out, const std::vector<std::string>& names,
                        const std::vector<std::vector<std::string>>& cells, size_t fit) {
  size_t nw = 5;
  for (const auto& name : names) nw = std::max(nw, display_width(name));
  nw = std::min(nw, fit / 2);  // a longer name wraps
  const size_t vw = fit > nw + 3 ? fit - nw - 3 : 1;
  std::string s;
  for (size_t r = 0; r < cells.size(); ++r) {
    s.clear();
    if (r) s += '\n';
    for (size_t i = 0; i < names.size(); ++i) {
      const std::vector<std::string> np = wrap_cell(names[i], nw);
      const std::string& v = cells[r][i];
      const std::vector<std::string> vp = looks_numeric(v) ? std::vector<std::string>{v} : wrap_cell(v, vw, kFitLines);
      for (size_t l = 0; l < std::max(np.size(), vp.size()); ++l) {
        const std::string& a = l < np.size() ? np[l] : std::string();
        s.append(nw - std::min(nw, display_width(a)), ' ') += a;
        s += l ? "   " : " = ";
        if (l < vp.size()) s += vp[l];
        while (!s.empty() && s.back() == ' ') s.pop_back();
        s += '\n';
      }
    }
    fwrite(s.data(), 1, s.size(), out);
  }
}

void print_aligned(FILE* out, const ResultSet& rs, const OutputOptions& opt) {
  const OutputMode mode = opt.mode;
  const size_t n = rs.columns.size();
  const bool md = mode == OutputMode::markdown;
  const bool headers = opt.headers || md;
  std::vector<std::vector<std::string>> cells;
  cells.reserve(rs.rows.size());
  std::vector<std::string> names(n);
  for (size_t i = 0; i < n; ++i) names[i] = visible(rs.columns[i], md);
  // width: as wide as needed. What a column may be narrowed to: content, its widest cell; least,
  // its widest number (never wrapped or cut), kMinText columns of text, kMinHeader of its header.
  std::vector<size_t> width(n, 0), content(n, 0), least(n, 1), word(n, 1);
  if (headers)
    for (size_t i = 0; i < n; ++i) width[i] = display_width(names[i]), word[i] = longest_word(names[i]);
  std::vector<bool> has_text(n, false);  // a cell that is not a number
  for (size_t r = 0; r < rs.rows.size(); ++r) {
    auto& c = cells.emplace_back(n);
    for (size_t i = 0; i < n; ++i) {
      const auto& v = rs.rows[r][i];
      if (!v)
        c[i] = opt.nullvalue;
      else if (opt.readable_numbers && real(rs, r, i))
        c[i] = readable_real(std::strtod(v->c_str(), nullptr));
      else
        c[i] = visible(*v, md);
      const size_t w = display_width(c[i]);
      content[i] = std::max(content[i], w);
      if (looks_numeric(c[i]))
        least[i] = std::max(least[i], w);
      else if (w)
        has_text[i] = true;
    }
  }
  // Widths: .width first, then --wrap, then (markdown never wraps) the terminal's width; a number
  // keeps its width whatever they say.
  std::vector<bool> right(n), set(n, false);
  for (size_t i = 0; i < n; ++i) {
    width[i] = std::max(width[i], content[i]);
    right[i] = numeric(rs, i);
    const int w = i < opt.widths.size() ? opt.widths[i] : 0;
    if (w) width[i] = (size_t)std::abs(w), right[i] = w < 0, set[i] = true;
    if (opt.wrap > 0 && !md) width[i] = std::min(width[i], (size_t)opt.wrap);
    if (has_text[i]) least[i] = std::max(least[i], std::min(width[i], kMinText));
    if (headers) least[i] = std::max(least[i], std::min(display_width(names[i]), kMinHeader));
    if (!md) width[i] = std::max(width[i], least[i]);
    width[i] = std::max<size_t>(width[i], 1);
  }
  // On a terminal (fit), columns narrow until a row fits: first headers wider than their cells
  // (down to their longest word), then text, widest first (down to kMinText), then headers whole.
  // A box or table that still does not fit drops its rules (column mode's layout: 2 columns
  // between cells instead of 3); one that does not fit either way prints each row as lines.
  // Text cut to fit keeps at most kFitLines lines, the last ending in an ellipsis (five kernels'
  // names took 259 lines); --wrap and .width show all of it.
  std::vector<size_t> max_lines(n, 0);
  bool column = mode == OutputMode::column, box = mode == OutputMode::box;
  if (opt.fit > 0 && !md) {
    const std::vector<size_t> natural = width;
    auto narrow = [&](std::vector<size_t>& w, size_t border) {
      size_t total = border;
      for (size_t x : w) total += x;
      const std::function<size_t(size_t)> floors[] = {[&](size_t i) {
                                                        return std::max({content[i], word[i], least[i]});
                                                      },
                                                      [&](size_t i) { return std::max(word[i], least[i]); },
                                                      [&](size_t i) { return least[i]; }};
      for (const auto& floor : floors)
        while (total > (size_t)opt.fit) {
          size_t widest = n;
          for (size_t i = 0; i < n; ++i)
            if (!set[i] && w[i] > floor(i) && (widest == n || w[i] > w[widest])) widest = i;
          if (widest == n) break;
          --w[widest], --total;
        }
      return total <= (size_t)opt.fit;
    };
    if (!narrow(width, column ? 2 * (n - 1) : 3 * n + 1)) {
      width = natural;
      if (column || !narrow(width, 2 * (n - 1))) return print_fitted_lines(out, names, cells, (size_t)opt.fit);
      column = true, box = false;
    }
    for (size_t i = 0; i < n; ++i)
      if (width[i] < natural[i] && opt.wrap == 0 && !set[i]) max_lines[i] = kFitLines;
  }
  auto rule = [&](const char* l, const char* m, const char* r, const char* h) {
    std::string s = l;
    for (size_t i = 0; i < n; ++i) {
      for (size_t k = 0; k < width[i] + 2; ++k) s += h;
      s += i + 1 < n ? m : r;
    }
    fmt::print(out, "{}\n", s);
  };
  auto line = [&](const std::vector<std::string>& v, bool header) {
    std::vector<std::vector<std::string>> pieces(n);
    size_t lines = 1;
    for (size_t i = 0; i < n; ++i) {
      pieces[i] = md ? std::vector<std::string>{v[i]} : wrap_cell(v[i], width[i], header ? 0 : max_lines[i]);
      lines = std::max(lines, pieces[i].size());
    }
    const char* bar = box ? "│" : "|";
    for (size_t l = 0; l < lines; ++l) {
      std::string s = column ? "" : bar;
      for (size_t i = 0; i < n; ++i) {
        const std::string& p = l < pieces[i].size() ? pieces[i][l] : std::string();
        const size_t pw = display_width(p);
        const size_t pad = width[i] > pw ? width[i] - pw : 0;
        const bool r = !header && right[i];
        if (!column || i) s += ' ';
        if (r) s.append(pad, ' ');
        s += p;
        if (!r && (!column || i + 1 < n)) s.append(pad, ' ');
        if (!column)
          s += ' ', s += bar;
        else if (i + 1 < n)
          s += ' ';
      }
      if (column)
        while (!s.empty() && s.back() == ' ') s.pop_back();
      fmt::print(out, "{}\n", s);
    }
  };
  if (md) {
    line(names, true);
    std::string s = "|";
    for (size_t i = 0; i < n; ++i) {
      s.append(width[i] + 1, '-');
      s.append(right[i] ? ":|" : "-|");
    }
    fmt::print(out, "{}\n", s);
    for (const auto& c : cells) line(c, false);
    return;
  }
  if (column) {
    if (headers) {
      line(names, true);
      std::string s;
      for (size_t i = 0; i < n; ++i) {
        if (i) s += "  ";
        s.append(width[i], '-');
      }
      fmt::print(out, "{}\n", s);
    }
    for (const auto& c : cells) line(c, false);
    return;
  }
  box ? rule("┌", "┬", "┐", "─") : rule("+", "+", "+", "-");
  if (headers) {
    line(names, true);
    box ? rule("├", "┼", "┤", "─") : rule("+", "+", "+", "-");
  }
  for (const auto& c : cells) line(c, false);
  box ? rule("└", "┴", "┘", "─") : rule("+", "+", "+", "-");
}

// A BLOB as SQL writes it, X'0a1b..' (as sqlite3's insert and quote modes).
std::string blob_literal(const std::string& bytes) {
  std::string out = "X'";
  for (unsigned char c : bytes) out += fmt::format("{:02x}", c);
  return out + "'";
}

// The streaming modes, one row at a time. `type(i)` is the cell's SQLite type, `text(i)` its text
// (a view, valid until the next call).
class RowPrinter {
 public:
  RowPrinter(FILE* out, const OutputOptions& opt, std::vector<std::string> names)
      : out_(out), opt_(opt), names_(std::move(names)), terminal_(is_terminal(out)) {
    // On a terminal every text is shown (show_controls); in JSON, as \u escapes (the same JSON).
    if (terminal_ && opt_.mode != OutputMode::json)
      for (auto& n : names_) n = show_controls(n);
    // (As sqlite3's line mode: names right-aligned to the longest, at least 5 columns.)
    name_width_ = 5;
    for (const auto& n : names_) name_width_ = std::max(name_width_, display_width(n));
  }

  // `type(i)`: the cell's SQLite type; `text(i)`: its text (a std::string_view, valid until the
  // next call); `real(i)`: a REAL cell's value.
  template <class Type, class Text, class Real>
  void row(Type type, Text text, Real real) {
    s_.clear();
    const size_t n = names_.size();
    auto view = [&](size_t i) { return type(i) == SQLITE_NULL ? std::string_view(opt_.nullvalue) : text(i); };
    auto cell = [&](size_t i) { return terminal_ ? show_controls(view(i)) : std::string(view(i)); };
    switch (opt_.mode) {
      case OutputMode::csv:
        if (!rows_ && opt_.headers) header_csv();
        for (size_t i = 0; i < n; ++i) {
          if (i) s_ += ',';
          if (type(i) == SQLITE_NULL && opt_.nullvalue.empty()) continue;
          if (terminal_)
            append_csv(s_, cell(i));
          else
            append_csv(s_, view(i));  // (no copy: a diff report writes tens of MB)
        }
        s_ += '\n';  // LF, not RFC 4180 CRLF: friendlier to Unix pipelines; csv readers take both
        break;
      case OutputMode::list:
      case OutputMode::tabs: {
        const std::string sep = opt_.mode == OutputMode::tabs ? "\t" : opt_.separator;
        if (!rows_ && opt_.headers) join(sep, [&](size_t i) { return names_[i]; });
        join(sep, cell);
        break;
      }
      case OutputMode::html:  // (sqlite3's layout: one cell per line)
        if (!rows_ && opt_.headers) {
          s_ += "<TR>";
          for (const auto& c : names_) s_ += "<TH>" + html_escape(c) + "</TH>\n";
          s_ += "</TR>\n";
        }
        s_ += "<TR>";
        for (size_t i = 0; i < n; ++i) s_ += "<TD>" + html_escape(cell(i)) + "</TD>\n";
        s_ += "</TR>\n";
        break;
      case OutputMode::insert:
      case OutputMode::quote:
        if (opt_.mode == OutputMode::insert) {
          s_ += "INSERT INTO " + (terminal_ ? show_controls(sql_identifier(opt_.table)) : sql_identifier(opt_.table));
          if (opt_.headers) {
            s_ += '(';
            for (size_t i = 0; i < n; ++i) {
              if (i) s_ += ',';
              s_ += sql_identifier(names_[i]);  // ("gpu ms", "count(*)": quoted as sqlite3 does)
            }
            s_ += ')';
          }
          s_ += " VALUES(";
        } else if (!rows_ && opt_.headers) {
          join(",", [&](size_t i) { return sql_string(names_[i]); });
        }
        for (size_t i = 0; i < n; ++i) {
          if (i) s_ += ',';
          // A REAL as the shortest text that reads back as the same double (an INSERT restores it
          // exactly; SQLite's own text keeps 15 digits).
          const int t = type(i);
          s_ += t == SQLITE_NULL      ? "NULL"
                : t == SQLITE_INTEGER ? std::string(text(i))
                : t == SQLITE_FLOAT   ? fmt::format("{}", real(i))
                : t == SQLITE_BLOB    ? blob_literal(std::string(text(i)))
                                      : sql_string(terminal_ ? show_controls(text(i)) : std::string(text(i)));
        }
        s_ += opt_.mode == OutputMode::insert ? ");\n" : "\n";
        break;
      case OutputMode::json:
        s_ += rows_ ? ",\n{" : "[{";
        for (size_t i = 0; i < n; ++i) {
          const int t = type(i);
          if (i) s_ += ',';
          s_ += json_string(names_[i], terminal_);
          s_ += ':';
          // Numbers as numbers, cell by cell (a column may mix types); non-finite REALs as null.
          if (t == SQLITE_NULL)
            s_ += "null";
          else if (t == SQLITE_INTEGER)
            s_ += text(i);
          else if (t == SQLITE_FLOAT)
            s_ += std::isfinite(real(i)) ? text(i) : "null";
          else if (const std::string t(text(i)); t_is_json(t))
            s_ += t;  // (an array or object, written as itself: json_value)
          else
            s_ += json_string(t, terminal_);
        }
        s_ += '}';
        break;
      default:  // line
        if (rows_) s_ += '\n';
        for (size_t i = 0; i < n; ++i) s_ += fmt::format("{:>{}} = {}\n", names_[i], name_width_, cell(i));
    }
    ++rows_;
    fwrite(s_.data(), 1, s_.size(), out_);
  }

  // After the last row (also after an error: a JSON array is closed, so it stays JSON).
  void finish() {
    if (opt_.mode == OutputMode::json && rows_) fputs("]\n", out_);
  }
  // No rows at all: the table's shape.
  void empty() {
    if (opt_.mode == OutputMode::json) fputs("[]\n", out_);
    if (opt_.mode == OutputMode::csv && opt_.headers && !names_.empty()) {
      s_.clear();
      header_csv();
      fwrite(s_.data(), 1, s_.size(), out_);
    }
  }
  int64_t rows() const { return rows_; }

 private:
  // One line: the cells `get(i)` joined by `sep`.
  template <class Get>
  void join(const std::string& sep, Get get) {
    for (size_t i = 0; i < names_.size(); ++i) {
      if (i) s_ += sep;
      s_ += get(i);
    }
    s_ += '\n';
  }
  // Whether a TEXT cell goes into json mode as itself: json_value, and on a terminal only when
  // it holds no DEL or C1 control (which a string's escapes would show instead).
  bool t_is_json(const std::string& t) const {
    if (!json_value(t)) return false;
    if (!terminal_) return true;
    for (size_t i = 0; i < t.size(); ++i)
      if (t[i] == 0x7f || ((unsigned char)t[i] == 0xc2 && i + 1 < t.size() && (unsigned char)t[i + 1] < 0xa0))
        return false;
    return true;
  }
  void header_csv() {
    for (size_t i = 0; i < names_.size(); ++i) {
      if (i) s_ += ',';
      append_csv(s_, names_[i]);
    }
    s_ += '\n';
  }

  FILE* out_;
  const OutputOptions& opt_;
  std::vector<std::string> names_;
  size_t name_width_ = 0;
  int64_t rows_ = 0;
  std::string s_;
  bool terminal_;
};

}  // namespace

void print_result(FILE* out, const ResultSet& rs, const OutputOptions& opt) {
  if (rs.columns.empty() || rs.rows.empty()) return;  // as the sqlite3 shell: no rows, no output
  if (aligned(opt.mode)) return print_aligned(out, rs, opt);
  RowPrinter p(out, opt, rs.columns);
  for (size_t r = 0; r < rs.rows.size(); ++r) {
    const auto& row = rs.rows[r];
    p.row(
        [&](size_t i) {
          return !row[i] ? SQLITE_NULL : real(rs, r, i) ? SQLITE_FLOAT : numeric(rs, i) ? SQLITE_INTEGER : SQLITE_TEXT;
        },
        [&](size_t i) { return row[i] ? std::string_view(*row[i]) : std::string_view(); },
        [&](size_t i) { return row[i] ? std::strtod(row[i]->c_str(), nullptr) : 0.0; });
  }
  p.finish();
}

void print_empty(FILE* out, const std::vector<std::string>& columns, const OutputOptions& opt) {
  RowPrinter(out, opt, columns).empty();
}

int print_statement(FILE* out, sqlite3_stmt* stmt, const OutputOptions& opt, int64_t* rows_out) {
  if (aligned(opt.mode)) {
    ResultSet rs;
    int rc = collect_rows(stmt, rs);
    if (rc == SQLITE_DONE) print_result(out, rs, opt);
    if (rows_out) *rows_out = (int64_t)rs.rows.size();
    return rc;
  }
  const int n = sqlite3_column_count(stmt);
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) names.emplace_back(sqlite3_column_name(stmt, i));
  RowPrinter p(out, opt, std::move(names));
  int rc;
  std::string real_text;  // a REAL's text, until the next cell's
  char int_text[24];      // an INTEGER's, the same
  // Each cell's type asked once a row, before any text conversion (the printer asks for a cell's
  // type up to three times; every sqlite3_column_* call has its cost).
  std::vector<int> types((size_t)n);
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    for (int i = 0; i < n; ++i) types[(size_t)i] = sqlite3_column_type(stmt, i);
    p.row([&](size_t i) { return types[i]; },
          [&](size_t i) {
            if (types[i] == SQLITE_FLOAT)
              return std::string_view(real_text = sqlite_real_text(sqlite3_column_double(stmt, (int)i)));
            if (types[i] == SQLITE_INTEGER) {  // (SQLite's text of an integer is %lld: to_chars's, without
                                               // its conversion of the cell to text and allocation)
              const auto end =
                  std::to_chars(int_text, int_text + sizeof int_text, sqlite3_column_int64(stmt, (int)i)).ptr;
              return std::string_view(int_text, (size_t)(end - int_text));
            }
            const auto* t = reinterpret_cast<const char*>(sqlite3_column_text(stmt, (int)i));
            return std::string_view(t ? t : "", (size_t)sqlite3_column_bytes(stmt, (int)i));
          },
          [&](size_t i) { return sqlite3_column_double(stmt, (int)i); });
  }
  p.finish();
  if (rows_out) *rows_out = p.rows();
  return rc;
}

}  // namespace tlsql
