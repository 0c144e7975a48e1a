// name_totals([schema]): the events per (trace, step, kind, name) with their count and summed
// duration, i.e. `SELECT trace, step, kind, name, count(*) AS events, sum(dur) AS dur FROM event
// GROUP BY trace, step, kind, name`, ordered so. Reports that total events per name (report_diff)
// read it instead of grouping every event in SQL: over a loaded trace SQLite's GROUP BY sorts every
// row's name text (0.2 s of CPU per side on a 77 MB serving trace, a diff then took 1.9x its two
// loads), where a hash over the store's interned ids takes milliseconds. A saved database has no
// store: the same GROUP BY runs there. dur: the sum of the durations present, NULL when none is (as
// sum()); a sum past 64 bits is an error, as sum()'s.
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "src/event_store.h"
#include "src/kind.h"
#include "udf/table_function.h"
#include "udf/tree/tree_access.h"

namespace tlsql {
namespace {

struct NameTotals {
  struct Row {
    int64_t trace;
    std::optional<int64_t> step;
    std::string kind;
    std::optional<std::string> name;
    int64_t events;
    std::optional<int64_t> dur;
  };
  static constexpr TableArgument arguments[] = {{"arg_schema", "schema"}};
  static auto columns() {
    return std::to_array<TableColumn<NameTotals, Row>>({
        {"trace", "INTEGER", field<&Row::trace>},
        {"step", "INTEGER", field<&Row::step>},
        {"kind", "TEXT", field<&Row::kind>},
        {"name", "TEXT", field<&Row::name>},
        {"events", "INTEGER", field<&Row::events>},
        {"dur", "INTEGER", field<&Row::dur>},
    });
  }

  std::vector<Row> rows(const TableCall& call) {
    std::unique_ptr<EventSource> own;
    EventSource& events = event_source(call.db, call.arg(0), own);
    std::vector<Row> out;
    if (const EventStore* s = events.store())
      from_store(*s, out);
    else
      from_sql(events, out);
    return out;
  }

 private:
  static void add_dur(Row& r, int64_t dur) {
    if (dur == kNull) return;
    if (!r.dur)
      r.dur = dur;
    else if (__builtin_add_overflow(*r.dur, dur, &*r.dur))
      throw FunctionError("integer overflow in a summed duration");
  }

  // One hash pass per trace over (step, kind, name id); the groups then sorted as GROUP BY's text
  // order would give them (kind and name compared as bytes, a NULL step first).
  static void from_store(const EventStore& s, std::vector<Row>& out) {
    struct Key {
      int32_t step;
      uint32_t name;
      Kind kind;
      bool operator==(const Key&) const = default;
    };
    struct KeyHash {
      size_t operator()(const Key& k) const {
        uint64_t x = ((uint64_t)(uint32_t)k.step << 32 | k.name) * 0x9E3779B97F4A7C15ull;
        return (size_t)(x ^ (x >> 29) ^ (uint64_t)k.kind * 0xBF58476D1CE4E5B9ull);
      }
    };
    for (const auto& t : s.traces) {
      std::unordered_map<Key, size_t, KeyHash> group;  // -> index in out
      const size_t first = out.size();
      for (const EventRec& e : t->rows) {
        auto [it, added] = group.try_emplace(Key{e.step, e.name, e.kind}, out.size());
        if (added) {
          Row r{t->id, std::nullopt, std::string(kind_name(e.kind)), std::nullopt, 0, std::nullopt};
          if (e.step != EventRec::kNull32) r.step = e.step;
          if (e.name != StringPool::kNone) r.name = std::string(s.strings.get(e.name));
          out.push_back(std::move(r));
        }
        Row& r = out[it->second];
        ++r.events;
        add_dur(r, e.dur);
      }
      std::sort(out.begin() + (ptrdiff_t)first, out.end(), [](const Row& a, const Row& b) {
        return a.step != b.step ? a.step < b.step : a.kind != b.kind ? a.kind < b.kind : a.name < b.name;
      });
    }
  }

  static void from_sql(EventSource& events, std::vector<Row>& out) {
    auto st = events.statement(
        "SELECT trace, step, kind, name, count(*), sum(dur) FROM {s}.event GROUP BY trace, step, kind, name "
        "ORDER BY trace, step, kind, name");
    while (st->step()) {
      sqlite3_stmt* q = st->get();
      auto integer = [&](int c) -> std::optional<int64_t> {
        if (sqlite3_column_type(q, c) == SQLITE_NULL) return std::nullopt;
        return sqlite3_column_int64(q, c);
      };
      auto text = [&](int c) -> std::optional<std::string> {
        const char* v = (const char*)sqlite3_column_text(q, c);
        if (!v) return std::nullopt;
        return std::string(v, (size_t)sqlite3_column_bytes(q, c));
      };
      out.push_back({sqlite3_column_int64(q, 0), integer(1), text(2).value_or(""), text(3), sqlite3_column_int64(q, 4),
                     integer(5)});
    }
  }
};

// kind_names(kind [, schema]): the distinct names of one kind's events, i.e. `SELECT DISTINCT name
// FROM event WHERE kind = ?`, a NULL name first, then the names as bytes. The sheets classify each
// distinct kernel name, and empty_report each op name, once: over a loaded trace SQLite's DISTINCT
// went through every row's name text (14-15 ms of a 200 MB trace's 60K kernels, 37 ms of its 284K
// ops), where the kind's rows (EventStore::rows_of_kind) marked by interned id take 1 ms. A saved
// database runs the DISTINCT on its (kind, trace) index.
struct KindNames {
  struct Row {
    std::optional<std::string> name;
  };
  static constexpr TableArgument arguments[] = {{"arg_kind", "kind", true}, {"arg_schema", "schema"}};
  static auto columns() { return std::to_array<TableColumn<KindNames, Row>>({{"name", "TEXT", field<&Row::name>}}); }

  std::vector<Row> rows(const TableCall& call) {
    const std::optional<std::string> kind = optional_text_arg(call.arg(0));
    std::unique_ptr<EventSource> own;
    EventSource& events = event_source(call.db, call.arg(1), own);
    std::vector<Row> out;
    if (!kind) return out;  // (kind = NULL holds for no row)
    if (const EventStore* s = events.store()) {
      const Kind k = kind_from_name(*kind);
      if (kind_name(k) != *kind || (size_t)k >= s->rows_of_kind.size()) return out;  // no event has it
      std::vector<bool> seen(s->strings.size() + 1, false);                          // per name id; the last: no name
      for (const uint32_t pos : s->rows_of_kind[(size_t)k]) {
        int64_t local = 0;
        const uint32_t name = s->trace_at((int64_t)pos, local).rows[(size_t)local].name;
        seen[name == StringPool::kNone ? seen.size() - 1 : name] = true;
      }
      if (seen.back()) out.push_back({std::nullopt});
      for (size_t id = 0; id + 1 < seen.size(); ++id)
        if (seen[id]) out.push_back({std::string(s->strings.get((uint32_t)id))});
    } else {
      auto st = events.statement("SELECT DISTINCT name FROM {s}.event WHERE kind = ?1");
      sqlite3_bind_text(st->get(), 1, kind->data(), (int)kind->size(), SQLITE_TRANSIENT);
      while (st->step()) {
        const char* v = (const char*)sqlite3_column_text(st->get(), 0);
        out.push_back({v ? std::optional<std::string>(std::string(v, (size_t)sqlite3_column_bytes(st->get(), 0)))
                         : std::nullopt});
      }
    }
    // (std::optional orders a NULL name first, then std::string's bytes, unsigned: SQLite's BINARY)
    std::sort(out.begin(), out.end(), [](const Row& a, const Row& b) { return a.name < b.name; });
    return out;
  }
};

}  // namespace

std::vector<SqlFunction> name_total_functions() {
  return {table_function<NameTotals>(
              "name_totals",
              "table: events and summed dur per (trace, step, kind, name): event's GROUP BY, from the store"),
          table_function<KindNames>("kind_names", "table: the distinct names of one kind's events")};
}
TLSQL_FUNCTIONS(name_total_functions);

}  // namespace tlsql
