#include "pictures/chart.h"

#include <cairo-svg.h>
#include <cairo.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "pictures/picture_sql.h"
#include "src/ascii_case.h"
#include "src/sql_names.h"
#include "udf/names/event_names.h"
#include "udf/perf/user_models.h"

namespace tlsql {

std::optional<ChartFormat> chart_format(const std::string& path) {
  auto ends = [&](const char* ext) {
    std::string e = ext;
    if (path.size() <= e.size()) return false;
    return lowercase(std::string_view(path).substr(path.size() - e.size())) == e;
  };
  if (ends(".svg")) return ChartFormat::svg;
  if (ends(".png")) return ChartFormat::png;
  if (ends(".csv")) return ChartFormat::csv;
  return std::nullopt;
}

namespace {

struct Rgb {
  double r, g, b;
};
constexpr Rgb hex(uint32_t v) { return {((v >> 16) & 255) / 255.0, ((v >> 8) & 255) / 255.0, (v & 255) / 255.0}; }
constexpr Rgb kInk = hex(0x222222), kGrey = hex(0x666666), kGrid = hex(0xdddddd), kMinorGrid = hex(0xf0f0f0);

// One color per op_category (and memcpy / memset for the timeline), in a fixed order.
struct Category {
  const char* name;
  Rgb color;
};
constexpr Category kCategories[] = {
    {"GEMM", hex(0x4e79a7)},     {"CONV_fwd", hex(0xf28e2b)},    {"CONV_bwd", hex(0xffbe7d)},
    {"SDPA_fwd", hex(0xb07aa1)}, {"SDPA_bwd", hex(0xd4a6c8)},    {"NORM_fwd", hex(0x59a14f)},
    {"NORM_bwd", hex(0x8cd17d)}, {"elementwise", hex(0x76b7b2)}, {"reduce", hex(0xedc948)},
    {"comm", hex(0xe15759)},     {"memcpy", hex(0x9c755f)},      {"memset", hex(0xd7b5a6)},
    {"other", hex(0xbab0ac)}};
constexpr int kNumCategories = sizeof(kCategories) / sizeof(kCategories[0]);
int category_index(const std::string& name) {
  for (int i = 0; i < kNumCategories; ++i)
    if (name == kCategories[i].name) return i;
  return kNumCategories - 1;  // other
}

// A cairo surface (SVG into memory, or a 2x PNG) with the few drawing calls the charts use.
class Canvas {
 public:
  Canvas(ChartFormat f, double w, double h) : format_(f) {
    if (f == ChartFormat::svg) {
      surface_ = cairo_svg_surface_create_for_stream(append, &bytes_, w, h);
    } else {
      surface_ = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, (int)std::ceil(w * 2), (int)std::ceil(h * 2));
      cairo_surface_set_device_scale(surface_, 2, 2);
    }
    cr_ = cairo_create(surface_);
    cairo_set_source_rgb(cr_, 1, 1, 1);
    cairo_paint(cr_);
  }
  ~Canvas() {
    if (cr_) cairo_destroy(cr_);
    if (surface_) cairo_surface_destroy(surface_);
  }
  Canvas(const Canvas&) = delete;
  Canvas& operator=(const Canvas&) = delete;

  std::string finish() {
    cairo_status_t st = cairo_status(cr_);
    cairo_destroy(cr_);
    cr_ = nullptr;
    if (st == CAIRO_STATUS_SUCCESS && format_ == ChartFormat::png)
      st = cairo_surface_write_to_png_stream(surface_, append, &bytes_);
    cairo_surface_finish(surface_);
    if (st == CAIRO_STATUS_SUCCESS) st = cairo_surface_status(surface_);
    if (st != CAIRO_STATUS_SUCCESS) throw std::runtime_error(fmt::format("cairo: {}", cairo_status_to_string(st)));
    return std::move(bytes_);
  }

  double text_width(const std::string& s, double size, bool bold = false) {
    font(size, bold);
    cairo_text_extents_t e;
    cairo_text_extents(cr_, s.c_str(), &e);
    return e.x_advance;
  }
  // `anchor` 0 = starts at x, 0.5 = centred, 1 = ends at x; y is the baseline.
  void text(double x, double y, const std::string& s, double size, Rgb c, double anchor = 0, bool bold = false,
            double angle = 0) {
    double w = text_width(s, size, bold);
    cairo_save(cr_);
    cairo_translate(cr_, x, y);
    cairo_rotate(cr_, angle);
    cairo_move_to(cr_, -anchor * w, 0);
    color(c);
    cairo_show_text(cr_, s.c_str());
    cairo_restore(cr_);
  }
  void rect(double x, double y, double w, double h, Rgb c, double alpha = 1) {
    cairo_rectangle(cr_, x, y, w, h);
    color(c, alpha);
    cairo_fill(cr_);
  }
  void frame(double x, double y, double w, double h, Rgb c, double width = 1) {
    cairo_rectangle(cr_, x, y, w, h);
    color(c);
    cairo_set_line_width(cr_, width);
    cairo_stroke(cr_);
  }
  void line(double x0, double y0, double x1, double y1, Rgb c, double width = 1, bool dashed = false) {
    std::vector<std::pair<double, double>> p{{x0, y0}, {x1, y1}};
    polyline(p, c, width, dashed);
  }
  void polyline(const std::vector<std::pair<double, double>>& p, Rgb c, double width, bool dashed = false) {
    if (p.empty()) return;
    cairo_move_to(cr_, p[0].first, p[0].second);
    for (size_t i = 1; i < p.size(); ++i) cairo_line_to(cr_, p[i].first, p[i].second);
    color(c);
    cairo_set_line_width(cr_, width);
    double dash[] = {5, 4};
    cairo_set_dash(cr_, dash, dashed ? 2 : 0, 0);
    cairo_stroke(cr_);
    cairo_set_dash(cr_, dash, 0, 0);
  }
  void polygon(const std::vector<std::pair<double, double>>& p, Rgb c, double alpha = 1) {
    if (p.empty()) return;
    cairo_move_to(cr_, p[0].first, p[0].second);
    for (size_t i = 1; i < p.size(); ++i) cairo_line_to(cr_, p[i].first, p[i].second);
    cairo_close_path(cr_);
    color(c, alpha);
    cairo_fill(cr_);
  }
  void circle(double x, double y, double r, Rgb fill, double alpha) {
    cairo_new_sub_path(cr_);
    cairo_arc(cr_, x, y, r, 0, 2 * M_PI);
    color(fill, alpha);
    cairo_fill_preserve(cr_);
    cairo_set_source_rgba(cr_, 0.15, 0.15, 0.15, 0.55);
    cairo_set_line_width(cr_, 0.6);
    cairo_stroke(cr_);
  }
  void clip(double x, double y, double w, double h) {
    cairo_save(cr_);
    cairo_rectangle(cr_, x, y, w, h);
    cairo_clip(cr_);
  }
  void unclip() { cairo_restore(cr_); }

 private:
  static cairo_status_t append(void* closure, const unsigned char* data, unsigned int n) {
    static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), n);
    return CAIRO_STATUS_SUCCESS;
  }
  void font(double size, bool bold) {
    cairo_select_font_face(cr_, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
                           bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr_, size);
  }
  void color(Rgb c, double alpha = 1) { cairo_set_source_rgba(cr_, c.r, c.g, c.b, alpha); }

  ChartFormat format_;
  std::string bytes_;
  cairo_surface_t* surface_ = nullptr;
  cairo_t* cr_ = nullptr;
};

// Marks the charts' tests count in the SVG: every roofline point and every diff bar is filled
// with exactly this opacity, and nothing else is.
constexpr double kMarkAlpha = 0.72;

struct Box {
  double x0, y0, x1, y1;
  bool hits(const Box& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
  bool inside(const Box& o) const { return x0 >= o.x0 && x1 <= o.x1 && y0 >= o.y0 && y1 <= o.y1; }
};
struct Disc {
  double x, y, r;
};
bool hits(const Box& b, const Disc& d) {
  double cx = std::clamp(d.x, b.x0, b.x1), cy = std::clamp(d.y, b.y0, b.y1);
  return (cx - d.x) * (cx - d.x) + (cy - d.y) * (cy - d.y) < d.r * d.r;
}

// A place for a w x h label near the disc `at`, inside `area`, clear of the labels already
// placed; first also clear of every other point, then of labels only. Spirals outwards.
std::optional<Box> place_label(const Disc& at, double w, double h, const Box& area, const std::vector<Box>& taken,
                               const std::vector<Disc>& points) {
  for (int pass = 0; pass < 2; ++pass)
    for (double gap : {3.0, 10.0, 22.0, 40.0, 65.0, 95.0, 135.0, 185.0, 250.0})
      for (int k = 0; k < 16; ++k) {
        double a = k * M_PI / 8, c = std::cos(a), s = std::sin(a), d = at.r + gap;
        double px = at.x + c * d, py = at.y - s * d;
        double x0 = c > 0.3 ? px : c < -0.3 ? px - w : px - w / 2;
        double y0 = s > 0.3 ? py - h : s < -0.3 ? py : py - h / 2;
        Box b{x0, y0, x0 + w, y0 + h};
        if (!b.inside(area)) continue;
        if (std::any_of(taken.begin(), taken.end(), [&](const Box& t) { return t.hits(b); })) continue;
        if (pass == 0 && std::any_of(points.begin(), points.end(), [&](const Disc& p) { return hits(b, p); })) continue;
        return b;
      }
  return std::nullopt;
}

struct LogScale {
  double lo, hi, a, b;
  double operator()(double v) const {
    return a + (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)) * (b - a);
  }
};
struct LinScale {
  double lo, hi, a, b;
  double operator()(double v) const { return a + (v - lo) / (hi - lo) * (b - a); }
};
// A round step that cuts `span` into about `target` parts; 1 for a span that is not a positive
// finite number (the loops drawing ticks by it then end).
double nice_step(double span, int target) {
  double raw = span / target, p = std::pow(10, std::floor(std::log10(raw)));
  if (!(raw > 0) || !std::isfinite(raw) || !(p > 0) || !std::isfinite(p))
    return std::isfinite(span) && span > 0 ? span : 1;
  for (double m : {1.0, 2.0, 5.0})
    if (m * p >= raw * 0.999) return m * p;
  return 10 * p;
}
// lo, lo + step, ... up to hi: the ticks of an axis, at most 1,000 whatever the numbers (a
// saved database's can be anything), none when they are not finite.
std::vector<double> tick_values(double lo, double hi, double step) {
  std::vector<double> out;
  if (!std::isfinite(lo) || !std::isfinite(hi) || !(step > 0) || !std::isfinite(step)) return out;
  const double n = std::floor((hi - lo) / step + 1e-3);
  for (int k = 0; k <= n && k < 1000; ++k) out.push_back(lo + k * step);
  return out;
}

std::string number(double v) {
  if (v != 0 && (std::fabs(v) >= 1e6 || std::fabs(v) < 1e-3)) return fmt::format("{:.0e}", v);
  return fmt::format("{:.6g}", v);
}
std::string duration(double ns) {
  if (ns < 1e3) return fmt::format("{:.0f} ns", ns);
  if (ns < 1e6) return fmt::format("{:.1f} µs", ns / 1e3);
  if (ns < 1e9) return fmt::format("{:.2f} ms", ns / 1e6);
  return fmt::format("{:.2f} s", ns / 1e9);
}
// Cuts `s` to `width` pixels with an ellipsis.
std::string fit(Canvas& cv, std::string s, double size, double width, bool bold = false) {
  if (cv.text_width(s, size, bold) <= width) return s;
  while (!s.empty() && cv.text_width(s + "…", size, bold) > width) {
    s.pop_back();
    while (!s.empty() && (s.back() & 0xC0) == 0x80) s.pop_back();  // whole UTF-8 characters
    if (!s.empty() && (s.back() & 0xC0) == 0xC0) s.pop_back();
  }
  return s + "…";
}

// Runs `sql`, calling `row` for each result row; errors become exceptions.
void for_each_row(sqlite3* db, const std::string& sql, const Binder& bind,
                  const std::function<void(sqlite3_stmt*)>& row) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) throw std::runtime_error(sqlite3_errmsg(db));
  if (bind) bind(s);
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) row(s);
  std::string err = rc == SQLITE_DONE ? "" : sqlite3_errmsg(db);
  sqlite3_finalize(s);
  if (!err.empty()) throw std::runtime_error(err);
}
std::string column_text(sqlite3_stmt* s, int i) {
  const unsigned char* t = sqlite3_column_text(s, i);
  return t ? std::string(reinterpret_cast<const char*>(t)) : std::string();
}

std::string to_csv(const ResultSet& rs) {
  char* buf = nullptr;
  size_t len = 0;
  FILE* f = open_memstream(&buf, &len);
  if (!f) throw std::runtime_error("out of memory");
  OutputOptions csv;
  csv.mode = OutputMode::csv;
  print_result(f, rs, csv);
  fclose(f);
  std::string out(buf, len);
  free(buf);
  return out;
}
std::optional<std::string> cell(double v) {
  if (!std::isfinite(v)) return std::nullopt;
  return fmt::format("{}", v);
}

// Legend swatches in a row from (x, y) (the swatches' top).
void legend_row(Canvas& cv, double x, double y, const std::vector<std::pair<std::string, Rgb>>& items) {
  for (auto& [label, c] : items) {
    cv.rect(x, y, 12, 12, c);
    cv.text(x + 17, y + 11, label, 12, kInk);
    x += 32 + cv.text_width(label, 12);
  }
}

// Legend swatches in a column from (x, y); returns the y below it.
double legend(Canvas& cv, double x, double y, const std::vector<std::pair<std::string, Rgb>>& items) {
  for (auto& [label, c] : items) {
    cv.rect(x, y - 9, 12, 12, c);
    cv.text(x + 18, y + 1, label, 12, kInk);
    y += 19;
  }
  return y;
}

// ---------------------------------------------------------------------------------------------
// Roofline

// The texts of a roofline's points, each kept once: a GB trace has hundreds of thousands of points
// and a few hundred distinct names, shapes and categories (looked up by view: no string is made
// for a text already held).
class Texts {
 public:
  const std::string* operator()(std::string_view s) {
    auto it = set_.find(s);
    if (it == set_.end()) it = set_.emplace(s).first;
    return &*it;
  }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_set<std::string, Hash, std::equal_to<>> set_;  // nodes: the pointers stay valid
};

// Column i's text, valid until the statement steps ("" for NULL).
std::string_view column_view(sqlite3_stmt* s, int i) {
  const auto* t = reinterpret_cast<const char*>(sqlite3_column_text(s, i));
  return t ? std::string_view(t, (size_t)sqlite3_column_bytes(s, i)) : std::string_view();
}

struct Point {
  int64_t uid, trace;
  const std::string *name, *label, *category, *dtype, *units;
  int category_index;  // of category, in kCategories
  double flops, bytes, ns, peak_tflops = NAN, peak_tbps = NAN;
  const std::string* shapes;                     // an op's input dims and types: with its name, the group a label names
  double x() const { return flops / bytes; }     // FLOP/byte
  double y() const { return flops / ns / 1e3; }  // FLOP/ns = GFLOP/s; /1e3 -> TFLOP/s
};

struct Ceiling {
  std::string dtype, units;
  double tflops, tbps;
  double knee() const { return tflops / tbps; }
  std::string name() const { return dtype + " " + units; }
};

// An SVG is drawn into the HTML report as is, unless it passes kInlineSvgLimit (a roofline of
// 250k ops is ~100 MB of SVG): then as a PNG, whose size does not grow with the marks. A chart of
// more than kInlineSvgMarks marks goes to PNG without drawing the SVG first.
constexpr size_t kInlineSvgLimit = 4 << 20, kInlineSvgMarks = 20000;
Chart render(const std::function<std::string(ChartFormat)>& draw, ChartFormat f, const std::string& summary,
             size_t marks = 0) {
  if (f != ChartFormat::inline_image) return {draw(f), summary, f};
  if (marks > kInlineSvgMarks) return {draw(ChartFormat::png), summary, ChartFormat::png};
  std::string svg = draw(ChartFormat::svg);
  if (svg.size() <= kInlineSvgLimit) return {std::move(svg), summary, ChartFormat::svg};
  return {draw(ChartFormat::png), summary, ChartFormat::png};
}

}  // namespace

std::function<Chart()> roofline_chart_job(sqlite3* db, bool kernels, const std::string& where, const Binder& bind,
                                          ChartFormat f, const std::string& schema) {
  const char* what = kernels ? "kernels" : "ops";
  std::string sql = picture_sql(kernels ? "roofline_kernels" : "roofline_ops", schema);
  if (!where.empty()) sql += " AND (" + where + ")";
  std::vector<Point> pts;
  int zero_flops = 0, no_bytes = 0, no_time = 0, out_of_range = 0;
  // A NULL label / category (the ops' query) is the name's short name / op_category, worked out
  // here once per name: a GB trace has a few hundred op names and hundreds of thousands of points.
  const std::shared_ptr<const UserModels> user = user_models(db);
  Texts texts;
  std::unordered_map<const std::string*, std::pair<const std::string*, const std::string*>> by_name;  // interned
  auto named = [&](sqlite3_stmt* s, const std::string* name, int c) {
    if (sqlite3_column_type(s, c) != SQLITE_NULL) return texts(column_view(s, c));
    auto it = by_name.find(name);
    if (it == by_name.end())
      it = by_name.emplace(name, std::pair(texts(short_name(*name)), texts(op_category(user.get(), *name)))).first;
    return c == 3 ? it->second.first : it->second.second;
  };
  auto point = [&](sqlite3_stmt* s) {
    // NULL (no number: a non-finite one, or no peak for this GPU) reads as NaN.
    auto num = [&](int c) { return sqlite3_column_type(s, c) == SQLITE_NULL ? NAN : sqlite3_column_double(s, c); };
    if (sqlite3_column_type(s, 5) == SQLITE_NULL) return;  // no FLOPs model
    const std::string* name = texts(column_view(s, 2));
    const std::string* category = named(s, name, 4);
    Point p{sqlite3_column_int64(s, 0),
            sqlite3_column_int64(s, 1),
            name,
            named(s, name, 3),
            category,
            texts(sqlite3_column_type(s, 10) == SQLITE_NULL ? "fp32" : column_view(s, 10)),
            texts(sqlite3_column_type(s, 11) == SQLITE_NULL ? "vector" : column_view(s, 11)),
            category_index(*category),
            num(5),
            num(6),
            num(7),
            num(8),
            num(9),
            texts(column_view(s, 12))};
    if (!(p.ns > 0))
      ++no_time;
    else if (!(p.flops > 0))
      ++zero_flops;
    else if (!(p.bytes > 0))
      ++no_bytes;
    else if (!std::isfinite(p.x()) || !std::isfinite(p.y()) || !(p.y() > 0))
      ++out_of_range;  // (a saved database's numbers can be anything)
    else
      pts.push_back(p);
  };
  try {
    for_each_row(db, sql, bind, point);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(fmt::format("roofline: {}{}", e.what(), where.empty() ? "" : " (in WHERE " + where + ")"));
  }

  // One compute ceiling per (dtype, units, peak) and the memory roof of each bandwidth.
  std::vector<Ceiling> ceilings;
  for (const Point& p : pts)
    if (std::isfinite(p.peak_tflops) && std::isfinite(p.peak_tbps) &&
        std::none_of(ceilings.begin(), ceilings.end(), [&](const Ceiling& c) {
          return c.dtype == *p.dtype && c.units == *p.units && c.tflops == p.peak_tflops && c.tbps == p.peak_tbps;
        }))
      ceilings.push_back({*p.dtype, *p.units, p.peak_tflops, p.peak_tbps});
  std::sort(ceilings.begin(), ceilings.end(), [](auto& a, auto& b) { return a.tflops > b.tflops; });

  // Title: the trace and its GPU (of the first point, else of the first trace).
  std::string trace_name, device = "unknown GPU";
  std::set<int64_t> traces;
  for (const Point& p : pts) traces.insert(p.trace);
  int64_t trace_id = pts.empty() ? 0 : pts[0].trace;
  for_each_row(
      db, picture_sql("chart_title", schema), [&](sqlite3_stmt* s) { sqlite3_bind_int64(s, 1, trace_id); },
      [&](sqlite3_stmt* s) {
        trace_name = column_text(s, 0);
        if (!column_text(s, 1).empty()) device = column_text(s, 1);
      });
  trace_name = trace_name.substr(trace_name.find_last_of('/') + 1);
  if (traces.size() > 1) trace_name += fmt::format(" and {} more traces", traces.size() - 1);

  // What follows draws, without the connection (the points' texts stay where `texts` keeps them:
  // moving the set keeps its nodes).
  return [=, pts = std::move(pts), texts = std::move(texts)]() mutable -> Chart {
    std::vector<size_t> by_time(pts.size());
    for (size_t i = 0; i < pts.size(); ++i) by_time[i] = i;
    std::sort(by_time.begin(), by_time.end(), [&](size_t a, size_t b) { return pts[a].ns > pts[b].ns; });
    // The labels name the 10 (name, shapes) groups with the most GPU time, each at its largest point:
    // ten instances of one op would otherwise take all ten labels.
    struct Group {
      double ns = 0;
      size_t count = 0, top = 0;  // top: its largest point
    };
    std::map<std::pair<const std::string*, const std::string*>, Group> groups;  // texts are kept once: by address
    for (size_t i : by_time) {  // largest first: the first point seen is the group's top
      Group& g = groups[{pts[i].name, pts[i].shapes}];
      if (!g.count++) g.top = i;
      g.ns += pts[i].ns;
    }
    std::vector<const Group*> ranked;
    for (const auto& [key, g] : groups) ranked.push_back(&g);
    // Most GPU time first; ties by name, then shapes.
    std::sort(ranked.begin(), ranked.end(), [&](const Group* a, const Group* b) {
      if (a->ns != b->ns) return a->ns > b->ns;
      const Point &pa = pts[a->top], &pb = pts[b->top];
      return std::tie(*pa.name, *pa.shapes) < std::tie(*pb.name, *pb.shapes);
    });
    if (ranked.size() > 10) ranked.resize(10);
    const size_t labelled = ranked.size();
    std::vector<bool> is_labelled(pts.size());
    for (const Group* g : ranked) is_labelled[g->top] = true;

    std::string summary = fmt::format("roofline: {} {} with FLOPs > 0, bytes and GPU time", pts.size(), what);
    if (zero_flops + no_bytes + no_time)
      summary += fmt::format(" ({} with 0 FLOPs, {} without bytes, {} without GPU time left out)", zero_flops, no_bytes,
                             no_time);
    if (out_of_range) summary += fmt::format(" ({} with numbers no plot can hold left out)", out_of_range);
    summary += "; " + device;
    for (const Ceiling& c : ceilings)
      summary +=
          fmt::format("; {} {:g} TFLOP/s, {:g} TB/s, ridge {:.4g} FLOP/byte", c.name(), c.tflops, c.tbps, c.knee());

    // Where draw() put each label (pixels of the 1100 x 720 picture): the CSV reports them.
    std::vector<std::optional<Box>> point_label(pts.size()), ceiling_label(ceilings.size());
    std::vector<size_t> point_mark(pts.size());  // which drawn mark (1, 2, ... in drawing order) shows it
    std::map<double, Box> memory_label;
    const double W = 1100, H = pts.empty() ? 130 : 720, L = 90, R = 850, T = 72, B = pts.empty() ? 110 : 640;
    auto draw = [&](ChartFormat format) {
      Canvas cv(format, W, H);
      cv.text(L, 30, fit(cv, fmt::format("Roofline: {} on {}", trace_name, device), 17, W - L - 20, true), 17, kInk, 0,
              true);
      cv.text(L, 52,
              fit(cv,
                  fmt::format("{} {} with FLOPs and GPU time · point area ∝ GPU time{}", pts.size(), what,
                              where.empty() ? "" : " · WHERE " + where),
                  12, W - L - 20),
              12, kGrey);
      if (pts.empty()) {
        cv.frame(L, T, R - L, B - T, kGrid);
        cv.text((L + R) / 2, (T + B) / 2 + 5, fmt::format("no {} with FLOPs, bytes and GPU time", what), 14, kGrey,
                0.5);
        return cv.finish();
      }

      // Axes: whole decades around the points and the ridges (knees).
      double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0;
      for (const Point& p : pts)
        xlo = std::min(xlo, p.x()), xhi = std::max(xhi, p.x()), ylo = std::min(ylo, p.y()), yhi = std::max(yhi, p.y());
      for (const Ceiling& c : ceilings)
        xlo = std::min(xlo, c.knee()), xhi = std::max(xhi, c.knee()), yhi = std::max(yhi, c.tflops);
      auto decade_down = [](double v) { return std::pow(10, std::floor(std::log10(v / 1.5))); };
      auto decade_up = [](double v) { return std::pow(10, std::ceil(std::log10(v * 1.5))); };
      LogScale sx{decade_down(xlo), decade_up(xhi), L, R}, sy{decade_down(ylo), decade_up(yhi), B, T};
      // At most 24 decades an axis, whatever the numbers (the grid is drawn decade by decade): the
      // lower end gives way (a ridge or point below it sits on the frame).
      for (LogScale* a : {&sx, &sy}) {
        if (!(a->hi > 0) || !std::isfinite(a->hi)) a->hi = 1e6;
        if (!(a->lo > 0) || a->lo >= a->hi || a->hi / a->lo > 1e24) a->lo = a->hi / 1e24;
      }

      for (double d = sx.lo; d <= sx.hi * 1.0001; d *= 10) {
        for (int m = 2; m < 10 && d * m < sx.hi; ++m) cv.line(sx(d * m), T, sx(d * m), B, kMinorGrid);
        cv.line(sx(d), T, sx(d), B, kGrid);
        cv.text(sx(d), B + 18, number(d), 12, kInk, 0.5);
      }
      for (double d = sy.lo; d <= sy.hi * 1.0001; d *= 10) {
        for (int m = 2; m < 10 && d * m < sy.hi; ++m) cv.line(L, sy(d * m), R, sy(d * m), kMinorGrid);
        cv.line(L, sy(d), R, sy(d), kGrid);
        cv.text(L - 6, sy(d) + 4, number(d), 12, kInk, 1);
      }
      cv.frame(L, T, R - L, B - T, kGrey);
      cv.text((L + R) / 2, B + 42, "Arithmetic intensity (FLOP/byte)", 13, kInk, 0.5);
      cv.text(L - 52, (T + B) / 2, "Achieved TFLOP/s", 13, kInk, 0.5, false, -M_PI / 2);

      // Roofs: the memory diagonal (TB/s x FLOP/byte = TFLOP/s) up to each ceiling's ridge.
      std::vector<Box> taken;
      cv.clip(L, T, R - L, B - T);
      for (const Ceiling& c : ceilings)
        cv.polyline({{sx(sx.lo), sy(c.tbps * sx.lo)}, {sx(c.knee()), sy(c.tflops)}, {sx(sx.hi), sy(c.tflops)}},
                    hex(0x333333), 1.6);
      cv.unclip();
      std::set<double> roofs;
      for (const Ceiling& c : ceilings) roofs.insert(c.tbps);
      for (double tb : roofs) {
        // Along the diagonal, a little right of where it enters the plot.
        double x_enter = std::max(sx.lo, sy.lo / tb), x_at = x_enter * 2.2;
        double angle = std::atan2(sy(tb * x_at * 10) - sy(tb * x_at), sx(x_at * 10) - sx(x_at));
        double px = sx(x_at), py = sy(tb * x_at) - 6;
        if (px < R - 60 && py > T + 10) {
          std::string label = fmt::format("memory {:g} TB/s", tb);
          cv.text(px, py, label, 11, kInk, 0, false, angle);
          double w = cv.text_width(label, 11);
          taken.push_back({px, std::min(py, py + std::sin(angle) * w) - 12, px + std::cos(angle) * w + 4, py + 2});
          memory_label[tb] = taken.back();  // the rotated text's bounding box
        }
      }

      // Points, largest first so small ones stay visible; area proportional to GPU time. Marks that
      // land on each other exactly (same place and size to 1/4 px: an op repeated every step) count
      // once for label placement, and those of one color are drawn once, with the alpha of n layers,
      // 1 - (1 - a)^n (what n draws of one disc composite to): a GB trace's million ops are a few
      // thousand distinct marks, and cairo's time goes with the marks drawn.
      const double max_ns = pts[by_time[0]].ns, r_max = 20;
      std::vector<Disc> discs(pts.size()), distinct;
      std::vector<size_t> distinct_of(pts.size()), mark_of(pts.size()), layers;
      std::map<std::tuple<long, long, long>, size_t> seen;
      std::map<std::pair<size_t, int>, size_t> marks;  // (distinct place, color) -> mark
      for (size_t i : by_time) {
        const Point& p = pts[i];
        discs[i] = {sx(p.x()), sy(p.y()), std::max(2.5, r_max * std::sqrt(p.ns / max_ns))};
        auto [it, fresh] = seen.try_emplace(
            {std::lround(discs[i].x * 4), std::lround(discs[i].y * 4), std::lround(discs[i].r * 4)}, distinct.size());
        distinct_of[i] = it->second;
        if (fresh) distinct.push_back(discs[i]);
        auto [m, new_mark] = marks.try_emplace({it->second, p.category_index}, layers.size());
        if (new_mark) layers.push_back(0);
        ++layers[mark_of[i] = m->second];
        point_mark[i] = m->second + 1;
      }
      for (size_t i : by_time)
        if (size_t& n = layers[mark_of[i]]) {
          cv.circle(discs[i].x, discs[i].y, discs[i].r, kCategories[pts[i].category_index].color,
                    1 - std::pow(1 - kMarkAlpha, (double)n));
          n = 0;  // drawn
        }
      // Ceiling labels along their line (right end first, then leftwards; above, then below), clear
      // of the points where possible, on a white backing; ceilings with the same peak share one.
      std::vector<std::pair<std::string, const Ceiling*>> ceiling_labels;
      for (const Ceiling& c : ceilings) {
        auto same = std::find_if(ceiling_labels.begin(), ceiling_labels.end(),
                                 [&](auto& l) { return l.second->tflops == c.tflops && l.second->tbps == c.tbps; });
        if (same != ceiling_labels.end())
          same->first += ", " + c.name();
        else
          ceiling_labels.push_back({c.name(), &c});
      }
      for (auto& [names, c] : ceiling_labels) {
        std::string label = fmt::format("{}: peak {:g} TFLOP/s · ridge {:.3g} FLOP/byte", names, c->tflops, c->knee());
        double w = cv.text_width(label, 11) + 6, y = sy(c->tflops);
        std::optional<Box> best;
        for (int pass = 0; pass < 3 && !best; ++pass)
          for (double x1 = R - 2; x1 - w >= (pass == 0 ? std::max(L, sx(c->knee())) : L) && !best; x1 -= 20)
            for (double y0 : {y - 16, y + 2}) {
              Box b{x1 - w, y0, x1, y0 + 14};
              if (!b.inside({L, T, R, B}) ||
                  std::any_of(taken.begin(), taken.end(), [&](auto& t) { return t.hits(b); }))
                continue;
              if (pass < 2 && std::any_of(distinct.begin(), distinct.end(), [&](auto& d) { return hits(b, d); }))
                continue;
              best = b;
              break;
            }
        if (!best) continue;
        taken.push_back(*best);
        for (size_t k = 0; k < ceilings.size(); ++k)
          if (ceilings[k].tflops == c->tflops && ceilings[k].tbps == c->tbps) ceiling_label[k] = best;
        cv.rect(best->x0, best->y0, w, 14, hex(0xffffff), 0.85);
        cv.text(best->x0 + 3, best->y1 - 3, label, 11, kInk);
      }
      // Labels of the top 10 by GPU time, never overlapping each other or the roof labels.
      const Box area{L + 2, T + 2, R - 2, B - 2};
      for (size_t r = 0; r < labelled; ++r) {
        const size_t i = ranked[r]->top;
        std::string label = ranked[r]->count > 1 ? fmt::format("{}. {} ×{} {}", r + 1, *pts[i].label, ranked[r]->count,
                                                               duration(ranked[r]->ns))
                                                 : fmt::format("{}. {} {}", r + 1, *pts[i].label, duration(pts[i].ns));
        double w = cv.text_width(label, 11) + 6, h = 15;
        std::vector<Disc> others;
        for (size_t k = 0; k < distinct.size(); ++k)
          if (k != distinct_of[i]) others.push_back(distinct[k]);
        auto b = place_label(discs[i], w, h, area, taken, others);
        if (!b) continue;
        taken.push_back(*b);
        point_label[i] = b;
        double cx = std::clamp(discs[i].x, b->x0, b->x1), cy = std::clamp(discs[i].y, b->y0, b->y1);
        double dx = cx - discs[i].x, dy = cy - discs[i].y, dist = std::hypot(dx, dy);
        if (dist > discs[i].r + 5)
          cv.line(discs[i].x + dx / dist * discs[i].r, discs[i].y + dy / dist * discs[i].r, cx, cy, kGrey, 0.8);
        cv.rect(b->x0, b->y0, b->x1 - b->x0, b->y1 - b->y0, hex(0xffffff), 0.85);
        cv.text(b->x0 + 3, b->y1 - 4, label, 11, kInk);
      }

      // Legend: categories present, with counts, and the size scale.
      std::map<int, int> counts;
      for (const Point& p : pts) ++counts[p.category_index];
      std::vector<std::pair<std::string, Rgb>> items;
      for (auto [c, n] : counts)
        items.push_back({fmt::format("{} ({})", kCategories[c].name, n), kCategories[c].color});
      cv.text(R + 20, T + 4, "op_category", 12, kInk, 0, true);
      double y = legend(cv, R + 20, T + 26, items) + 14;
      cv.text(R + 20, y, "point area ∝ GPU time", 12, kInk);
      cv.circle(R + 20 + r_max, y + 12 + r_max, r_max, kGrey, 0.25);
      cv.text(R + 28 + 2 * r_max, y + 16 + r_max, duration(max_ns) + " (largest)", 11, kGrey);
      return cv.finish();
    };
    if (f == ChartFormat::csv) {
      draw(ChartFormat::svg);  // lays the labels out
      ResultSet rs;
      rs.columns = {"kind",   "uid",      "name", "category", "dtype",    "units",    "x",       "y",
                    "gpu_us", "labelled", "mark", "label_x0", "label_y0", "label_x1", "label_y1"};
      auto put = [&](std::vector<std::optional<std::string>> row, const std::optional<Box>& b) {
        for (double v : {b ? b->x0 : NAN, b ? b->y0 : NAN, b ? b->x1 : NAN, b ? b->y1 : NAN}) row.push_back(cell(v));
        rs.rows.push_back(std::move(row));
      };
      for (size_t r = 0; r < by_time.size(); ++r) {
        const Point& p = pts[by_time[r]];
        put({"point", std::to_string(p.uid), *p.name, *p.category, *p.dtype, *p.units, cell(p.x()), cell(p.y()),
             cell(p.ns / 1e3), is_labelled[by_time[r]] ? "1" : "0", std::to_string(point_mark[by_time[r]])},
            point_label[by_time[r]]);
      }
      for (size_t k = 0; k < ceilings.size(); ++k) {
        const Ceiling& c = ceilings[k];
        put({"ceiling", std::nullopt, c.name(), std::nullopt, c.dtype, c.units, cell(c.knee()), cell(c.tflops),
             std::nullopt, std::nullopt, std::nullopt},
            ceiling_label[k]);
      }
      std::set<double> roofs;
      for (const Ceiling& c : ceilings) roofs.insert(c.tbps);
      for (double tb : roofs)
        put({"memory", std::nullopt, "HBM", std::nullopt, std::nullopt, std::nullopt, std::nullopt, cell(tb),
             std::nullopt, std::nullopt, std::nullopt},
            memory_label.count(tb) ? std::optional<Box>(memory_label[tb]) : std::nullopt);
      return {to_csv(rs), summary, ChartFormat::csv};
    }
    return render(draw, f, summary, pts.size());
  };
}

Chart roofline_chart(sqlite3* db, bool kernels, const std::string& where, const Binder& bind, ChartFormat f,
                     const std::string& schema) {
  return roofline_chart_job(db, kernels, where, bind, f, schema)();
}

// -------------------------------------------------------------------------------------------------
// Timeline

namespace {
struct GpuEvent {
  int64_t ts, end;
  int category;
};
struct Lane {
  int64_t trace, device, stream;
  std::vector<GpuEvent> events;
};
// Union length of sorted-by-start intervals, clipped to [t0, t1], added per pixel into `px`.
int64_t busy_per_pixel(std::vector<std::pair<int64_t, int64_t>> iv, int64_t t0, int64_t t1, std::vector<double>& px) {
  std::sort(iv.begin(), iv.end());
  const double ns_per_px = (double)(t1 - t0) / (double)px.size();
  int64_t total = 0, cur_a = 0, cur_b = 0;  // the open interval [cur_a, cur_b) (none while equal)
  auto flush = [&] {
    if (cur_b <= cur_a) return;
    total += cur_b - cur_a;
    for (int64_t p = (int64_t)((cur_a - t0) / ns_per_px); p < (int64_t)px.size(); ++p) {
      double lo = t0 + p * ns_per_px, hi = lo + ns_per_px;
      if (lo >= cur_b) break;
      px[p] += std::min<double>(hi, cur_b) - std::max<double>(lo, cur_a);
    }
  };
  for (auto [a, b] : iv) {
    a = std::max(a, t0), b = std::min(b, t1);
    if (b <= a) continue;
    if (cur_b <= cur_a || a > cur_b) {
      flush();
      cur_a = a, cur_b = b;
    } else {
      cur_b = std::max(cur_b, b);
    }
  }
  flush();
  return total;
}
}  // namespace

Chart timeline_chart(sqlite3* db, const std::string& range, ChartFormat f, const std::string& schema) {
  struct Row {
    int64_t trace, device, stream, ts, end, step;
    bool has_step;
    int category;
  };
  std::vector<Row> rows;
  for_each_row(db, picture_sql("timeline_gpu", schema), nullptr, [&](sqlite3_stmt* s) {
    rows.push_back({sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1), sqlite3_column_int64(s, 2),
                    sqlite3_column_int64(s, 3), sqlite3_column_int64(s, 4), sqlite3_column_int64(s, 5),
                    sqlite3_column_type(s, 5) != SQLITE_NULL, category_index(column_text(s, 6))});
  });
  if (rows.empty()) throw std::runtime_error("timeline: the trace has no GPU events");

  // The window: everything, one step (its GPU work's span), or A..B ms from the first GPU event.
  int64_t first = INT64_MAX, last = INT64_MIN;
  for (const Row& r : rows) first = std::min(first, r.ts), last = std::max(last, r.end);
  int64_t t0 = first, t1 = last;
  std::string window = "whole trace";
  if (!range.empty()) {
    int64_t step;
    size_t dots = range.find("..");
    char* end = nullptr;
    if (dots != std::string::npos) {
      std::string from = range.substr(0, dots), to = range.substr(dots + 2);
      char* end2 = nullptr;
      double a = std::strtod(from.c_str(), &end), b = std::strtod(to.c_str(), &end2);
      if (from.empty() || to.empty() || *end || *end2 || !(b > a))
        throw std::runtime_error("timeline: the range is START..END in ms from the first GPU event, START < END");
      // Saturating: a range far past the trace must not wrap around int64 ns.
      auto at = [&](double ms) {
        double off = std::clamp(ms * 1e6, -9e18, 9e18);
        int64_t t;
        return __builtin_add_overflow(first, (int64_t)std::llround(off), &t) ? (off > 0 ? INT64_MAX : INT64_MIN) : t;
      };
      t0 = at(a), t1 = at(b);
      window = fmt::format("{:g}..{:g} ms", a, b);
    } else if (step = std::strtoll(range.c_str(), &end, 10); end && *end == 0 && end != range.c_str()) {
      t0 = INT64_MAX, t1 = INT64_MIN;
      for (const Row& r : rows)
        if (r.has_step && r.step == step) t0 = std::min(t0, r.ts), t1 = std::max(t1, r.end);
      if (t0 > t1) {
        std::set<int64_t> steps;
        for (const Row& r : rows)
          if (r.has_step) steps.insert(r.step);
        throw std::runtime_error(
            fmt::format("timeline: no GPU work in step {} ({})", step,
                        steps.empty() ? "the trace has no steps"
                                      : fmt::format("steps with GPU work: {}..{}", *steps.begin(), *steps.rbegin())));
      }
      window = fmt::format("step {}", step);
    } else {
      throw std::runtime_error(fmt::format("timeline: '{}' is neither a step number nor START..END (ms)", range));
    }
  }
  if (t1 <= t0) (t0 < INT64_MAX ? t1 = t0 + 1 : t0 = t1 - 1);
  // Every event is clipped to [t0, t1], so with a window whose length fits in int64 no difference
  // below can overflow (a trace may hold timestamps from -2^63 to 2^63 ns).
  if (int64_t span; __builtin_sub_overflow(t1, t0, &span)) t0 = t1 - INT64_MAX;

  // Lanes per (trace, device, stream), of the events that overlap the window; step starts.
  std::map<std::tuple<int64_t, int64_t, int64_t>, Lane> lanes;
  std::map<std::pair<int64_t, int64_t>, int64_t> step_start;  // (trace, step) -> first GPU start
  for (const Row& r : rows) {
    if (r.has_step) {
      auto [it, fresh] = step_start.try_emplace({r.trace, r.step}, r.ts);
      if (!fresh) it->second = std::min(it->second, r.ts);
    }
    if (r.end < t0 || r.ts > t1) continue;
    Lane& lane = lanes[{r.trace, r.device, r.stream}];
    lane.trace = r.trace, lane.device = r.device, lane.stream = r.stream;
    lane.events.push_back({r.ts, r.end, r.category});
  }
  std::set<int64_t> trace_ids;
  for (auto& [k, lane] : lanes) trace_ids.insert(lane.trace);
  const bool many_traces = trace_ids.size() > 1;
  std::map<int64_t, std::string> rank_of;
  for_each_row(db, picture_sql("trace_ranks", schema), nullptr,
               [&](sqlite3_stmt* s) { rank_of[sqlite3_column_int64(s, 0)] = column_text(s, 1); });

  // Layout: per GPU a utilisation strip and then its stream lanes.
  const double W = 1400, L = 200, R = W - 24, PW = R - L, strip_h = 30, lane_h = 20, lane_gap = 5;
  const int npx = (int)PW;
  std::vector<std::pair<int64_t, int64_t>> gpus;
  for (auto& [k, lane] : lanes)
    if (gpus.empty() || gpus.back() != std::pair{lane.trace, lane.device}) gpus.push_back({lane.trace, lane.device});
  const double top = 104;
  double H = top;
  for (auto& g : gpus) {
    H += strip_h + 10 + 12;
    for (auto& [k, lane] : lanes)
      if (std::pair{lane.trace, lane.device} == g) H += lane_h + lane_gap;
  }
  H += 56;

  // Busy time per GPU (union over its streams) and per lane, for the strip and the CSV.
  std::map<std::pair<int64_t, int64_t>, std::vector<double>> busy_px;
  std::map<std::pair<int64_t, int64_t>, int64_t> busy_ns;
  std::map<std::tuple<int64_t, int64_t, int64_t>, int64_t> lane_busy;
  for (auto& g : gpus) {
    std::vector<std::pair<int64_t, int64_t>> iv;
    for (auto& [k, lane] : lanes)
      if (std::pair{lane.trace, lane.device} == g) {
        std::vector<std::pair<int64_t, int64_t>> own;
        for (const GpuEvent& e : lane.events) iv.push_back({e.ts, e.end}), own.push_back({e.ts, e.end});
        std::vector<double> scratch(npx);
        lane_busy[k] = busy_per_pixel(own, t0, t1, scratch);
      }
    busy_px[g].assign(npx, 0);
    busy_ns[g] = busy_per_pixel(iv, t0, t1, busy_px[g]);
  }
  size_t n_events = 0;
  for (auto& [k, lane] : lanes) n_events += lane.events.size();
  int64_t all_busy = 0;
  for (auto& [g, ns] : busy_ns) all_busy += ns;
  const double window_ns = (double)(t1 - t0);
  std::string summary = fmt::format("timeline: {}, {} GPU events, {} streams, {} GPUs, {}, busy {:.1f} %", window,
                                    n_events, lanes.size(), gpus.size(), duration(window_ns),
                                    100.0 * (double)all_busy / window_ns / (double)std::max<size_t>(1, gpus.size()));

  if (f == ChartFormat::csv) {
    ResultSet rs;
    rs.columns = {"row", "trace", "device", "stream", "step", "events", "busy_ns", "start_ns", "end_ns"};
    auto i = [](int64_t v) { return std::optional<std::string>(std::to_string(v)); };
    rs.rows.push_back({"window", {}, {}, {}, {}, i((int64_t)n_events), i(all_busy), i(t0), i(t1)});
    for (auto& g : gpus) rs.rows.push_back({"gpu", i(g.first), i(g.second), {}, {}, {}, i(busy_ns[g]), {}, {}});
    for (auto& [k, lane] : lanes)
      rs.rows.push_back({"lane",
                         i(lane.trace),
                         i(lane.device),
                         i(lane.stream),
                         {},
                         i((int64_t)lane.events.size()),
                         i(lane_busy[k]),
                         {},
                         {}});
    for (auto& [k, ts] : step_start)
      if (ts >= t0 && ts <= t1) rs.rows.push_back({"step", i(k.first), {}, {}, i(k.second), {}, {}, i(ts), {}});
    return {to_csv(rs), summary, ChartFormat::csv};
  }

  std::string trace_name;
  for_each_row(db, picture_sql("first_trace", schema), nullptr,
               [&](sqlite3_stmt* s) { trace_name = column_text(s, 0); });
  trace_name = trace_name.substr(trace_name.find_last_of('/') + 1);
  if (rank_of.size() > 1) trace_name += fmt::format(" and {} more traces", rank_of.size() - 1);

  auto draw = [&](ChartFormat format) {
    Canvas cv(format, W, H);
    cv.text(24, 30, fit(cv, fmt::format("GPU timeline: {} ({})", trace_name, window), 17, W - 48, true), 17, kInk, 0,
            true);
    cv.text(24, 52,
            fmt::format("{} kernels / memcpys / memsets · {} streams · {} · work narrower than a pixel is drawn as "
                        "its share of the pixel",
                        n_events, lanes.size(), duration(window_ns)),
            12, kGrey);
    // Legend: the categories that occur.
    std::set<int> present;
    for (auto& [k, lane] : lanes)
      for (const GpuEvent& e : lane.events) present.insert(e.category);
    std::vector<std::pair<std::string, Rgb>> items;
    for (int c : present) items.push_back({kCategories[c].name, kCategories[c].color});
    legend_row(cv, 24, 66, items);

    const double ns_per_px = window_ns / npx;
    auto xpos = [&](double ts) { return L + (ts - (double)t0) / ns_per_px; };
    double y = top;
    const double lanes_top = y;
    for (auto& g : gpus) {
      // Utilisation strip: busy share of each pixel's time, as a filled profile.
      std::string who =
          many_traces ? fmt::format("rank {} · GPU {}", rank_of[g.first], g.second) : fmt::format("GPU {}", g.second);
      cv.text(L - 10, y + 13, who, 12, kInk, 1, true);
      cv.text(L - 10, y + 27, fmt::format("busy {:.1f} %", 100.0 * (double)busy_ns[g] / window_ns), 11, kGrey, 1);
      cv.rect(L, y, PW, strip_h, hex(0xf4f4f4));
      const std::vector<double>& px = busy_px[g];
      for (int p = 0; p < npx;) {
        int q = p + 1;
        auto level = [&](int i) { return std::lround(std::min(1.0, px[i] / ns_per_px) * strip_h); };
        while (q < npx && level(q) == level(p)) ++q;
        if (level(p) > 0) {
          double h = (double)level(p);
          cv.rect(L + p, y + strip_h - h, q - p, h, hex(0x4e79a7), 0.85);
        }
        p = q;
      }
      y += strip_h + 10;
      for (auto& [k, lane] : lanes) {
        if (std::pair{lane.trace, lane.device} != g) continue;
        cv.text(L - 10, y + 13, fmt::format("stream {}", lane.stream), 11, kInk, 1);
        cv.rect(L, y, PW, lane_h, hex(0xfafafa));
        // Work at least a pixel wide is a bar of its own; narrower work adds its time to its
        // pixel(s), drawn in the pixel's dominant category with opacity = the busy share.
        std::vector<std::array<double, kNumCategories>> cov(npx);
        for (auto& c : cov) c.fill(0);
        for (const GpuEvent& e : lane.events) {
          double a = std::max<double>(e.ts, t0), b = std::min<double>(e.end, t1);
          double x0 = (a - t0) / ns_per_px, x1 = (b - t0) / ns_per_px;
          if (x1 - x0 >= 1.0) {
            cv.rect(L + x0, y, x1 - x0, lane_h, kCategories[e.category].color);
            continue;
          }
          for (int p = std::max(0, (int)x0); p <= std::min(npx - 1, (int)x1); ++p) {
            double lo = std::max(x0, (double)p), hi = std::min(x1, (double)p + 1);
            if (hi > lo) cov[p][e.category] += (hi - lo) * ns_per_px;
          }
        }
        for (int p = 0; p < npx;) {
          auto key = [&](int i) {
            double total = 0;
            int best = 0;
            for (int c = 0; c < kNumCategories; ++c) {
              total += cov[i][c];
              if (cov[i][c] > cov[i][best]) best = c;
            }
            long alpha = total > 0 ? std::lround(std::clamp(total / ns_per_px, 0.3, 1.0) * 20) : 0;
            return std::pair{best, alpha};
          };
          auto k0 = key(p);
          int q = p + 1;
          while (q < npx && key(q) == k0) ++q;
          if (k0.second > 0) cv.rect(L + p, y, q - p, lane_h, kCategories[k0.first].color, k0.second / 20.0);
          p = q;
        }
        y += lane_h + lane_gap;
      }
      y += 12;
    }
    const double lanes_bottom = y - 12;
    // Step boundaries: where each step's GPU work starts.
    double last_label_end = -1e9;
    for (auto& [k, ts] : step_start) {
      if (ts < t0 || ts > t1 || (many_traces && k.first != *trace_ids.begin())) continue;
      double x = xpos((double)ts);
      cv.line(x, lanes_top - 6, x, lanes_bottom, hex(0xc03030), 1, true);
      std::string label = fmt::format("step {}", k.second);
      double w = cv.text_width(label, 11), x0 = x + 3 + w <= W - 4 ? x + 3 : x - 3 - w;  // inside the picture
      if (x0 - 2 > last_label_end) {
        cv.text(x0, lanes_top - 8, label, 11, hex(0xc03030));
        last_label_end = x0 + w;
      }
    }
    // Time axis, ms from the window's start.
    double span_ms = window_ns / 1e6, step_ms = nice_step(span_ms, 10);
    cv.line(L, lanes_bottom + 4, R, lanes_bottom + 4, kGrey);
    for (double t : tick_values(0, span_ms * 1.0001, step_ms)) {
      double x = L + t * 1e6 / ns_per_px;
      cv.line(x, lanes_bottom + 4, x, lanes_bottom + 9, kGrey);
      cv.text(x, lanes_bottom + 22, number(t), 11, kInk, 0.5);
    }
    cv.text((L + R) / 2, lanes_bottom + 42, "Time (ms) from the start of the window", 12, kInk, 0.5);
    return cv.finish();
  };
  return render(draw, f, summary);
}

// -------------------------------------------------------------------------------------------------
// Memory

// torch.profiler's memory timeline (view memory_timeline): the bytes each category holds over
// time, stacked in torch's category order (Parameter at the bottom), as torch's and HTA's plots.
// Bytes in the largest unit that keeps the axis numbers >= 1 (both memory charts).
struct ByteUnit {
  double scale;
  const char* unit;
};
static ByteUnit byte_unit(int64_t top) {
  if (top >= (int64_t{1} << 30)) return {1073741824.0, "GiB"};
  if (top >= (1 << 20)) return {1048576.0, "MiB"};
  if (top >= (1 << 10)) return {1024.0, "KiB"};
  return {1.0, "B"};
}
// The axes both memory charts draw inside the plot box: bytes up to `top` (in `bytes`' unit,
// rounded up to a tick), ms over the `span_ns` along; the two scales they drew with.
struct PlotBox {
  double L, R, T, B;
};
static std::pair<LinScale, LinScale> memory_axes(Canvas& cv, PlotBox box, int64_t span_ns, int64_t top, ByteUnit bytes,
                                                 const char* x_label) {
  const auto [L, R, T, B] = box;
  LinScale sx{0, (double)span_ns / 1e6, L, R};
  double hi = (double)top / bytes.scale, step = nice_step(hi, 6);
  hi = std::ceil(hi / step) * step;
  LinScale sy{0, hi, B, T};
  for (double v : tick_values(0, hi, step)) {
    cv.line(L, sy(v), R, sy(v), v == 0 ? kGrey : kGrid);
    cv.text(L - 8, sy(v) + 4, number(v), 11, kInk, 1);
  }
  for (double v : tick_values(0, (double)span_ns / 1e6, nice_step((double)span_ns / 1e6, 8))) {
    cv.line(sx(v), B, sx(v), B + 4, kGrey);
    cv.text(sx(v), B + 18, number(v), 11, kInk, 0.5);
  }
  cv.text((L + R) / 2, B + 42, x_label, 13, kInk, 0.5);
  cv.text(L - 8, T - 12, bytes.unit, 12, kInk, 1);
  return {sx, sy};
}

static Chart memory_timeline_chart(sqlite3* db, ChartFormat f, const std::string& schema) {
  static constexpr std::array<const char*, 8> kNames = {"Parameter",  "Optimizer state", "Input",    "Temporary",
                                                        "Activation", "Gradient",        "Autograd", "Unknown"};
  std::vector<int64_t> times;                 // distinct times, in order
  std::vector<std::array<int64_t, 8>> sizes;  // bytes per category after the last row of each time
  size_t events = 0;
  for_each_row(db,
               fmt::format("SELECT ts, category_index, bytes FROM {0}.memory_timeline "
                           "WHERE trace = (SELECT min(trace) FROM {0}.memory_timeline) ORDER BY ts, uid",
                           schema_sql(db, schema)),
               {}, [&](sqlite3_stmt* s) {
                 int64_t ts = sqlite3_column_int64(s, 0), c = sqlite3_column_int64(s, 1);
                 if (times.empty() || times.back() != ts) {
                   times.push_back(ts);
                   sizes.push_back(sizes.empty() ? std::array<int64_t, 8>{} : sizes.back());
                 }
                 if (c >= 0 && c < 8) sizes.back()[c] += sqlite3_column_int64(s, 2);
                 ++events;
               });
  if (times.empty())
    throw std::runtime_error(
        "memory: the trace has no [memory] events (profile with profile_memory=True) and is no memory timeline "
        "(export_memory_timeline)");
  const int64_t t0 = times.front(), t1 = std::max(times.back(), t0 + 1);
  int64_t top = 1;
  for (auto& v : sizes) {
    int64_t sum = 0;
    for (int64_t b : v) sum += b;
    top = std::max(top, sum);
  }
  const std::string summary = fmt::format("memory: memory timeline, {} rows at {} times, peak {:.3g} GiB", events,
                                          times.size(), (double)top / 1073741824.0);
  if (f == ChartFormat::csv) {
    ResultSet rs;
    rs.columns = {"ms"};
    for (const char* n : kNames) rs.columns.push_back(std::string(n) + "_bytes");
    for (size_t i = 0; i < times.size(); ++i) {
      std::vector<std::optional<std::string>> row{fmt::format("{}", (double)(times[i] - t0) / 1e6)};
      for (int64_t b : sizes[i]) row.push_back(std::to_string(b));
      rs.rows.push_back(std::move(row));
    }
    return {to_csv(rs), summary, ChartFormat::csv};
  }
  const double W = 1100, H = 540, L = 90, R = W - 30, T = 100, B = H - 60;
  const Rgb colors[] = {hex(0x66c5cc), hex(0xf6cf71), hex(0xf89c74), hex(0xdcb0f2),
                        hex(0x87c55f), hex(0x9eb9f3), hex(0xfe88b1), hex(0xb3b3b3)};
  const ByteUnit bytes = byte_unit(top);
  auto draw = [&](ChartFormat format) {
    Canvas cv(format, W, H);
    cv.text(24, 30, "Memory timeline", 17, kInk, 0, true);
    cv.text(24, 52, "bytes held per category (torch.profiler export_memory_timeline), stacked", 12, kGrey);
    auto [sx, sy] = memory_axes(cv, {L, R, T, B}, t1 - t0, top, bytes, "ms from the first time");
    // Each category a band between the stack below it and itself, as a step function of time.
    std::vector<double> below(times.size(), 0);
    std::vector<std::pair<std::string, Rgb>> keys;
    for (size_t c = 0; c < 8; ++c) {
      std::vector<double> above(times.size());
      bool any = false;
      for (size_t i = 0; i < times.size(); ++i)
        above[i] = below[i] + (double)sizes[i][c] / bytes.scale, any |= sizes[i][c];
      if (any) {
        std::vector<std::pair<double, double>> band;
        for (size_t i = 0; i < times.size(); ++i) {
          double x0 = sx((double)(times[i] - t0) / 1e6);
          double x1 = i + 1 < times.size() ? sx((double)(times[i + 1] - t0) / 1e6) : R;
          band.emplace_back(x0, sy(above[i])), band.emplace_back(x1, sy(above[i]));
        }
        for (size_t i = times.size(); i-- > 0;) {
          double x0 = sx((double)(times[i] - t0) / 1e6);
          double x1 = i + 1 < times.size() ? sx((double)(times[i + 1] - t0) / 1e6) : R;
          band.emplace_back(x1, sy(below[i])), band.emplace_back(x0, sy(below[i]));
        }
        cv.polygon(band, colors[c]);
        keys.emplace_back(kNames[c], colors[c]);
      }
      below = std::move(above);
    }
    legend_row(cv, 24, 66, keys);
    return cv.finish();
  };
  return render(draw, f, summary);
}

Chart memory_chart(sqlite3* db, ChartFormat f, const std::string& schema) {
  struct Sample {
    int64_t ts, allocated;
    std::optional<int64_t> reserved;  // NULL where the trace does not record Total Reserved (2021 traces)
    int64_t uid;
  };
  std::map<std::pair<int64_t, std::string>, std::vector<Sample>> devices;  // (trace, device) -> samples by time
  bool summed = false;  // some device's allocated is the running sum of Bytes (memory_event)
  for_each_row(db,
               fmt::format("SELECT trace, device, ts, allocated, reserved, uid, allocated_from FROM {}.memory_event "
                           "WHERE ts IS NOT NULL AND allocated IS NOT NULL ORDER BY trace, device, ts, uid",
                           schema_sql(db, schema)),
               {}, [&](sqlite3_stmt* s) {
                 devices[{sqlite3_column_int64(s, 0), column_text(s, 1)}].push_back(
                     {sqlite3_column_int64(s, 2), sqlite3_column_int64(s, 3),
                      sqlite3_column_type(s, 4) == SQLITE_NULL ? std::nullopt
                                                               : std::optional<int64_t>(sqlite3_column_int64(s, 4)),
                      sqlite3_column_int64(s, 5)});
                 summed = summed || column_text(s, 6) != "Total Allocated";
               });
  if (devices.empty()) return memory_timeline_chart(db, f, schema);  // a memory timeline file, else an error
  const bool ranks = devices.begin()->first.first != devices.rbegin()->first.first;
  auto label = [&](const std::pair<int64_t, std::string>& d) {
    return ranks ? fmt::format("trace {} {}", d.first, d.second) : d.second;
  };
  int64_t t0 = INT64_MAX, t1 = INT64_MIN, top = 1;
  for (auto& [d, v] : devices)
    for (const Sample& x : v)
      t0 = std::min(t0, x.ts), t1 = std::max(t1, x.ts), top = std::max({top, x.allocated, x.reserved.value_or(0)});
  if (t1 <= t0) t1 = t0 + 1;
  std::string summary = fmt::format("memory: {} device(s), {} [memory] events", devices.size(), [&] {
    size_t n = 0;
    for (auto& [d, v] : devices) n += v.size();
    return n;
  }());
  if (f == ChartFormat::csv) {
    ResultSet rs;
    rs.columns = {"device", "ms", "allocated_bytes", "reserved_bytes", "uid"};
    for (auto& [d, v] : devices)
      for (const Sample& x : v)
        rs.rows.push_back({label(d), fmt::format("{}", (double)(x.ts - t0) / 1e6), std::to_string(x.allocated),
                           x.reserved ? std::optional<std::string>(std::to_string(*x.reserved)) : std::nullopt,
                           std::to_string(x.uid)});
    return {to_csv(rs), summary, ChartFormat::csv};
  }

  const double W = 1100, H = 540, L = 90, R = W - 30, T = 100, B = H - 60;
  const Rgb colors[] = {hex(0x636efa), hex(0xef553b), hex(0x00cc96), hex(0xab63fa), hex(0xffa15a), hex(0x19d3f3)};
  const ByteUnit bytes = byte_unit(top);
  auto draw = [&](ChartFormat format) {
    Canvas cv(format, W, H);
    cv.text(24, 30, "Memory", 17, kInk, 0, true);
    cv.text(24, 52,
            summed ? "allocated (solid; where the trace records no totals, the sum of Bytes since its start) and "
                     "reserved (dashed) bytes after each [memory] event; ● the peak"
                   : "allocated (solid) and reserved (dashed) bytes after each [memory] event; ● the peak",
            12, kGrey);
    auto [sx, sy] = memory_axes(cv, {L, R, T, B}, t1 - t0, top, bytes, "ms from the first [memory] event");
    std::vector<std::pair<std::string, Rgb>> keys;
    size_t i = 0;
    for (auto& [d, v] : devices) {
      const Rgb c = colors[i++ % 6];
      keys.emplace_back(label(d), c);
      // A step line, one vertex pair per pixel column at most: each column keeps its highest
      // value, so the peak is never smoothed away.
      const bool reserved = std::any_of(v.begin(), v.end(), [](const Sample& x) { return x.reserved.has_value(); });
      for (int which = 0; which < (reserved ? 2 : 1); ++which) {
        std::vector<std::pair<double, double>> line;
        double col = -1, best = 0;
        auto value = [&](const Sample& x) {
          return (double)(which ? x.reserved.value_or(0) : x.allocated) / bytes.scale;
        };
        for (size_t k = 0; k < v.size(); ++k) {
          double x = std::floor(sx((double)(v[k].ts - t0) / 1e6)), y = value(v[k]);
          if (x != col) {
            if (col >= 0) line.emplace_back(col, sy(best)), line.emplace_back(x, sy(best));
            col = x, best = y;
          } else {
            best = std::max(best, y);
          }
        }
        line.emplace_back(col, sy(best)), line.emplace_back(R, sy(value(v.back())));
        cv.polyline(line, c, which ? 1.0 : 1.6, which == 1);
      }
      auto peak = std::max_element(v.begin(), v.end(),
                                   [](const Sample& a, const Sample& b) { return a.allocated < b.allocated; });
      double px = sx((double)(peak->ts - t0) / 1e6), py = sy((double)peak->allocated / bytes.scale);
      cv.circle(px, py, 4, c, kMarkAlpha);
      const double b = (double)peak->allocated;
      const std::string text = fmt::format("{} peak {}", label(d),
                                           b >= 1073741824.0 ? fmt::format("{:.3g} GiB", b / 1073741824.0)
                                           : b >= 1048576.0  ? fmt::format("{:.3g} MiB", b / 1048576.0)
                                           : b >= 1024.0     ? fmt::format("{:.3g} KiB", b / 1024.0)
                                                             : fmt::format("{:.0f} B", b));
      const bool left = px + 7 + cv.text_width(text, 11) > R;
      cv.text(left ? px - 7 : px + 7, py - 6, text, 11, kInk, left ? 1 : 0);
    }
    legend_row(cv, 24, 66, keys);
    return cv.finish();
  };
  return render(draw, f, summary);
}

// -------------------------------------------------------------------------------------------------
// Diff

Chart diff_chart(const ResultSet& diff_rows, bool duration_chart, int top, ChartFormat f) {
  auto col = [&](const char* name) {
    for (size_t i = 0; i < diff_rows.columns.size(); ++i)
      if (diff_rows.columns[i] == name) return i;
    throw std::runtime_error(fmt::format("diff chart: the diff report has no column {}", name));
  };
  const char* metric = duration_chart ? "duration" : "counts";
  size_t ci = col("name"), cc = col(duration_chart ? "Control_total_duration" : "Control_counts"),
         ct = col(duration_chart ? "Test_total_duration" : "Test_counts"),
         cd = col(duration_chart ? "diff_duration" : "diff_counts");
  struct Bar {
    std::string name;
    double control, test, diff;
  };
  std::vector<Bar> bars;
  auto num = [](const std::optional<std::string>& s) { return s ? std::strtod(s->c_str(), nullptr) : 0.0; };
  int skipped_steps = 0;
  for (const auto& r : diff_rows.rows) {
    Bar b{r[ci].value_or(""), num(r[cc]), num(r[ct]), num(r[cd])};
    if (b.name == kDiffTotalName) continue;
    if (duration_chart && b.name.rfind("ProfilerStep", 0) == 0) {
      ++skipped_steps;
      continue;
    }
    if (b.diff != 0) bars.push_back(b);
  }
  std::stable_sort(bars.begin(), bars.end(), [](const Bar& a, const Bar& b) {
    return std::fabs(a.diff) != std::fabs(b.diff) ? std::fabs(a.diff) > std::fabs(b.diff) : a.name < b.name;
  });
  const size_t changed = bars.size();
  if ((int)bars.size() > top) bars.resize(top);
  std::string summary = fmt::format("diff {}: top {} of {} names whose {} changed{}", metric, bars.size(), changed,
                                    metric, skipped_steps ? ", ProfilerStep* left out" : "");
  if (f == ChartFormat::csv) {
    ResultSet rs;
    rs.columns = {"name", "control", "test", "difference"};
    for (const Bar& b : bars) rs.rows.push_back({b.name, cell(b.control), cell(b.test), cell(b.diff)});
    return {to_csv(rs), summary, ChartFormat::csv};
  }

  const double W = 1100, group_h = 3 * 10 + 12, T = 100;
  const double H = T + std::max<size_t>(1, bars.size()) * group_h + 70;
  auto draw = [&](ChartFormat format) {
    Canvas cv(format, W, H);
    double label_w = 0;
    for (const Bar& b : bars) label_w = std::max(label_w, cv.text_width(b.name, 11));
    const double L = std::clamp(label_w + 24, 120.0, 420.0), R = W - 30;
    cv.text(24, 30, duration_chart ? "Ops Duration Comparison" : "Ops Count Comparison", 17, kInk, 0, true);
    cv.text(24, 52,
            fmt::format("top {} of {} changed names by |test − control|{}", bars.size(), changed,
                        skipped_steps ? " · ProfilerStep* left out" : ""),
            12, kGrey);
    const std::pair<std::string, Rgb> series[] = {
        {"Control", hex(0x636efa)}, {"Test", hex(0xef553b)}, {"Difference", hex(0x00cc96)}};
    legend_row(cv, 24, 66, {series, series + 3});
    if (bars.empty()) {
      cv.text(W / 2, T + 30, "no differences", 14, kGrey, 0.5);
      return cv.finish();
    }
    double lo = 0, hi = 0;
    for (const Bar& b : bars)
      for (double v : {b.control, b.test, b.diff})
        if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
    double step = nice_step(hi - lo, 8);
    if (!duration_chart) step = std::max(1.0, step);  // counts are whole numbers
    lo = std::floor(lo / step) * step, hi = std::ceil(hi / step) * step;
    if (hi == lo) hi = lo + 1;
    LinScale sx{lo, hi, L, R};
    const double B = T + bars.size() * group_h;
    for (double v : tick_values(lo, hi, step)) {
      cv.line(sx(v), T - 4, sx(v), B, std::fabs(v) < step * 1e-6 ? kGrey : kGrid);
      cv.text(sx(v), B + 16, number(std::fabs(v) < step * 1e-6 ? 0 : v), 11, kInk, 0.5);
    }
    cv.text((L + R) / 2, B + 40, duration_chart ? "Total duration (µs)" : "Count", 13, kInk, 0.5);
    for (size_t i = 0; i < bars.size(); ++i) {
      double y = T + i * group_h + 6;
      cv.text(L - 8, y + 19, fit(cv, bars[i].name, 11, L - 16), 11, kInk, 1);
      double v[3] = {bars[i].control, bars[i].test, bars[i].diff};
      for (int s = 0; s < 3; ++s) {
        if (v[s] == 0) continue;
        double x0 = sx(std::min(0.0, v[s])), x1 = sx(std::max(0.0, v[s]));
        cv.rect(x0, y + s * 10, std::max(x1 - x0, 0.5), 9, series[s].second, kMarkAlpha);
      }
    }
    return cv.finish();
  };
  return render(draw, f, summary);
}

}  // namespace tlsql
