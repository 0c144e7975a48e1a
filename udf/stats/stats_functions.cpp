// SQL that analysts reach for and SQLite 3.40 lacks: median, percentile, stddev, variance and
// regexp (the REGEXP operator). Meanings follow SQLite's own extensions (ext/misc/percentile.c:
// p from 0 to 100, linear interpolation between the two nearest values; extension-functions.c:
// sample variance and standard deviation) so that queries written for them give the same numbers.
#include <regex.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "udf/registry.h"
#include "udf/sql_function.h"

namespace tlsql {

namespace {

// The numeric value of an aggregate's argument: false for NULL (skipped, as every SQL aggregate
// does), an error for text that is not a number.
bool number_arg(sqlite3_context* ctx, sqlite3_value* v, const char* fn, double& out) {
  switch (sqlite3_value_numeric_type(v)) {
    case SQLITE_NULL: return false;
    case SQLITE_INTEGER:
    case SQLITE_FLOAT: out = sqlite3_value_double(v); return true;
    default: {
      std::string msg = std::string(fn) + ": not a number: '" +
                        (sqlite3_value_text(v) ? reinterpret_cast<const char*>(sqlite3_value_text(v)) : "") + "'";
      sqlite3_result_error(ctx, msg.c_str(), -1);
      return false;
    }
  }
}

// median(x) / percentile(x, p): every value is kept (exact, as SQLite's percentile extension).
struct Values {
  std::vector<double> v;
  double p = -1;  // the group's percentile, fixed by its first row
};

Values* values(sqlite3_context* ctx, bool make) {
  auto** slot = static_cast<Values**>(sqlite3_aggregate_context(ctx, make ? sizeof(Values*) : 0));
  if (!slot) return nullptr;
  if (!*slot && make) *slot = new Values();
  return *slot;
}

void percentile_step(sqlite3_context* ctx, int, sqlite3_value** argv) {
  const bool median = function_data(ctx) != nullptr;
  const char* fn = median ? "median" : "percentile";
  double p = 50;
  if (!median) {
    if (!number_arg(ctx, argv[1], fn, p) || p < 0 || p > 100)
      return sqlite3_result_error(ctx, "percentile(x, p): p must be a number from 0 to 100", -1);
  }
  double x;
  if (!number_arg(ctx, argv[0], fn, x)) return;
  Values* s = values(ctx, true);
  if (!s) return sqlite3_result_error_nomem(ctx);
  if (s->p < 0) s->p = p;
  if (s->p != p) return sqlite3_result_error(ctx, "percentile(x, p): p must be the same for every row of a group", -1);
  s->v.push_back(x);
}

void percentile_final(sqlite3_context* ctx) {
  auto** slot = static_cast<Values**>(sqlite3_aggregate_context(ctx, 0));
  if (!slot || !*slot) return sqlite3_result_null(ctx);
  std::unique_ptr<Values> s(*slot);
  *slot = nullptr;
  if (s->v.empty()) return sqlite3_result_null(ctx);
  // The value at rank p/100 * (n - 1), interpolated between its two neighbours.
  const double rank = s->p / 100 * (double)(s->v.size() - 1);
  const auto lo = (size_t)std::floor(rank);
  std::nth_element(s->v.begin(), s->v.begin() + (long)lo, s->v.end());
  const double a = s->v[lo];
  double b = a;
  if (lo + 1 < s->v.size()) b = *std::min_element(s->v.begin() + (long)lo + 1, s->v.end());
  sqlite3_result_double(ctx, a + (b - a) * (rank - (double)lo));
}

// variance(x) / stddev(x): sample (n - 1), NULL below two values; Welford's running sums, which
// stay exact where the sum of squares would cancel (nanosecond timestamps).
struct Moments {
  int64_t n = 0;
  double mean = 0, m2 = 0;
};

void moments_step(sqlite3_context* ctx, int, sqlite3_value** argv) {
  double x;
  if (!number_arg(ctx, argv[0], function_data(ctx) ? "stddev" : "variance", x)) return;
  auto* m = static_cast<Moments*>(sqlite3_aggregate_context(ctx, sizeof(Moments)));
  if (!m) return sqlite3_result_error_nomem(ctx);
  ++m->n;
  const double d = x - m->mean;
  m->mean += d / (double)m->n;
  m->m2 += d * (x - m->mean);
}

void moments_final(sqlite3_context* ctx) {
  auto* m = static_cast<Moments*>(sqlite3_aggregate_context(ctx, 0));
  if (!m || m->n < 2) return sqlite3_result_null(ctx);
  const double var = m->m2 / (double)(m->n - 1);
  sqlite3_result_double(ctx, function_data(ctx) ? std::sqrt(var) : var);
}

// regexp(pattern, text): 1 when the POSIX extended regular expression matches anywhere in text
// (`text REGEXP pattern` calls it). POSIX regexec, not std::regex: libstdc++'s matcher recurses
// once per character and a long args text would overflow the stack. The compiled pattern is
// kept while it stays the same (SQLite's auxdata).
struct Compiled {
  regex_t re{};
  bool ok = false;
  ~Compiled() {
    if (ok) regfree(&re);
  }
};

void regexp_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  const unsigned char* pattern = sqlite3_value_text(argv[0]);
  const unsigned char* text = sqlite3_value_text(argv[1]);
  if (!pattern || !text) return sqlite3_result_null(ctx);
  if (auto* c = static_cast<Compiled*>(sqlite3_get_auxdata(ctx, 0)))
    return sqlite3_result_int(ctx, regexec(&c->re, reinterpret_cast<const char*>(text), 0, nullptr, 0) == 0);
  auto c = std::make_unique<Compiled>();
  if (int rc = regcomp(&c->re, reinterpret_cast<const char*>(pattern), REG_EXTENDED | REG_NOSUB)) {
    char why[200];
    regerror(rc, &c->re, why, sizeof why);
    const std::string msg = std::string("regexp: bad pattern '") + reinterpret_cast<const char*>(pattern) + "': " + why;
    return sqlite3_result_error(ctx, msg.c_str(), -1);
  }
  c->ok = true;
  sqlite3_result_int(ctx, regexec(&c->re, reinterpret_cast<const char*>(text), 0, nullptr, 0) == 0);
  // Last: SQLite may free it at once (a pattern that is not constant is compiled per call).
  sqlite3_set_auxdata(ctx, 0, c.release(), [](void* p) { delete static_cast<Compiled*>(p); });
}

}  // namespace

std::vector<SqlFunction> stats_functions() {
  std::vector<SqlFunction> v;
  auto aggregate = [&](const char* name, const char* args, const char* help, int n,
                       void (*step)(sqlite3_context*, int, sqlite3_value**), void (*final)(sqlite3_context*),
                       void* data) {
    SqlFunction f{name, args, help, SqlFunction::aggregate};
    f.min_args = f.max_args = n, f.flags |= SQLITE_DETERMINISTIC, f.fn = step, f.final = final, f.user_data = data;
    v.push_back(f);
  };
  void* yes = reinterpret_cast<void*>(1);
  aggregate("median", "(x)", "aggregate: the middle value (the mean of the two middle ones for an even count)", 1,
            percentile_step, percentile_final, yes);
  aggregate("percentile", "(x, p)", "aggregate: the p-th percentile, p from 0 to 100, interpolated linearly", 2,
            percentile_step, percentile_final, nullptr);
  aggregate("variance", "(x)", "aggregate: sample variance (n - 1); NULL below two values", 1, moments_step,
            moments_final, nullptr);
  aggregate("stddev", "(x)", "aggregate: sample standard deviation (n - 1); NULL below two values", 1, moments_step,
            moments_final, yes);
  SqlFunction re{"regexp", "(pattern, text)",
                 "1 if the POSIX extended regular expression matches anywhere in text; `text REGEXP pattern`"};
  re.min_args = re.max_args = 2, re.flags |= SQLITE_DETERMINISTIC, re.fn = regexp_fn;
  v.push_back(re);
  return v;
}
TLSQL_FUNCTIONS(stats_functions);

}  // namespace tlsql
