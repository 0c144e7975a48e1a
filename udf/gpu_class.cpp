#include "udf/gpu_class.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string>

#include "src/ascii_case.h"
#include "src/sql_assets.h"
#include "src/sql_names.h"
#include "src/sqlite_util.h"

namespace tlsql {

namespace {

bool contains_any(const std::string& s, std::initializer_list<const char*> keys) {
  for (const char* k : keys)
    if (s.find(k) != std::string::npos) return true;
  return false;
}

}  // namespace

std::optional<GpuRule> gpu_rule(std::string_view name) {
  if (name == "tlsql") return GpuRule::tlsql;
  if (name == "tracelens") return GpuRule::tracelens;
  if (name == "hta") return GpuRule::hta;
  return std::nullopt;
}

const char* gpu_class_name(GpuClass c) {
  switch (c) {
    case GpuClass::compute: return "compute";
    case GpuClass::communication: return "communication";
    case GpuClass::memcpy: return "memcpy";
    case GpuClass::memset: return "memset";
    case GpuClass::none: break;
  }
  return "";
}

bool communication_kernel(std::string_view name) {
  // The shipped kernel rules (library and kernel names, not words: inductor fuses an all()
  // reduction into kernels named triton_poi_fused_..._all_reduce_..., which compute).
  const KernelRule* r = KernelRules::shipped().match(name);
  return r && r->cls == GpuClass::communication;
}

bool communication_op(std::string_view name) {
  if (communication_kernel(name)) return true;
  // Inductor names its kernels (and the ops that launch them) after the aten ops they fuse:
  // triton_poi_fused_..._all_reduce_... computes an all() reduction.
  if (name.substr(0, 7) == "triton_") return false;
  return contains_any(lowercase(name), {"c10d::", "record_param_comms", "allreduce", "all_reduce", "allgather",
                                        "all_gather", "reduce_scatter", "reducescatter", "all_to_all", "alltoall"});
}

std::string copy_direction(std::string_view name) {
  // A side's letter: Kineto's own (H, D, A, P), or the first of Host / Device / Array / Peer in
  // either case.
  auto letter = [](std::string_view side) -> char {
    for (std::string_view w : {"host", "device", "array", "peer"})
      if (side.size() == 1 ? (side[0] | 0x20) == w[0] : lowercase(side) == w) return (char)(w[0] - 'a' + 'A');
    return 0;
  };
  auto code = [&](std::string_view from, std::string_view to) {
    const char a = letter(from), b = letter(to);
    return a && b ? std::string{a, 't', 'o', b} : std::string();
  };
  if (name.starts_with("Memcpy ")) {
    name.remove_prefix(7);
    if (name.size() >= 4 && name.substr(1, 2) == "to" && (name.size() == 4 || name[4] == ' ' || name[4] == '(') &&
        std::isupper((unsigned char)name[0]) && std::isupper((unsigned char)name[3]))
      return code(name.substr(0, 1), name.substr(3, 1));  // Kineto: "HtoD (Pageable -> Device)"
    if (name.starts_with("Unified ")) name.remove_prefix(8);
    if (const size_t to = name.find("-to-"); to != std::string_view::npos)
      return code(name.substr(0, to), name.substr(to + 4));  // nsys: "Host-to-Device"
    return "";
  }
  if (name.starts_with("MEMORY_COPY_")) {  // rocprofv3: "MEMORY_COPY_HOST_TO_DEVICE"
    name.remove_prefix(12);
    if (const size_t to = name.find("_TO_"); to != std::string_view::npos)
      return code(name.substr(0, to), name.substr(to + 4));
  }
  return "";
}

std::string collective_name(std::string_view name) {
  // Compared without case, underscores and colons: _allgather_base, all_gather, AllGather and
  // nccl:all_gather are one word. Longer words first: allreduce holds reduce, reducescatter
  // holds scatter, sendrecv holds send, alltoallv holds alltoall.
  std::string w;
  for (char c : lowercase(name))
    if (c != '_' && c != ':') w += c;
  static const std::pair<const char*, const char*> kWords[] = {{"reducescatter", "ReduceScatter"},
                                                               {"allgather", "AllGather"},
                                                               {"alltoallv", "AllToAllv"},
                                                               {"alltoall", "AllToAll"},
                                                               {"allreduce", "AllReduce"},
                                                               {"crossdevicereduce", "AllReduce"},
                                                               {"quickreduce", "AllReduce"},
                                                               {"broadcast", "Broadcast"},
                                                               {"sendrecv", "SendRecv"},
                                                               {"barrier", "Barrier"},
                                                               {"gather", "Gather"},
                                                               {"scatter", "Scatter"},
                                                               {"reduce", "Reduce"},
                                                               {"send", "Send"},
                                                               {"recv", "Recv"}};
  for (auto [word, canonical] : kWords)
    if (w.find(word) != std::string::npos) return canonical;
  return "";
}

KernelRules::KernelRules(std::vector<KernelRule> rules) : rules_(std::move(rules)) {
  for (const KernelRule& r : rules_) {
    std::string_view best;
    if (r.pattern.find_first_of("?[") == std::string::npos)
      for (size_t p = 0; p <= r.pattern.size();) {
        const size_t star = std::min(r.pattern.find('*', p), r.pattern.size());
        const std::string_view run = std::string_view(r.pattern).substr(p, star - p);
        // (ASCII runs only: GLOB reads UTF-8 as characters, and two different malformed
        // sequences both read as U+FFFD; an ASCII byte is always itself.)
        if (run.size() > best.size() &&
            std::all_of(run.begin(), run.end(), [](char c) { return (unsigned char)c < 0x80; }))
          best = run;
        p = star + 1;
      }
    needles_.emplace_back(best);
  }
}

const KernelRule* KernelRules::match(std::string_view name) const {
  const std::string l = lowercase(name);
  for (size_t i = 0; i < rules_.size(); ++i)
    if ((needles_[i].empty() || l.find(needles_[i]) != std::string::npos) &&
        sqlite3_strglob(rules_[i].pattern.c_str(), l.c_str()) == 0)
      return &rules_[i];
  return nullptr;
}

namespace {
constexpr size_t kMaxPattern = 256, kMaxStars = 8, kMaxRules = 10000;

// kernel_rule's rows in the order they apply; throws SqlError for a row tlsql would not write.
std::vector<KernelRule> read_rules(sqlite3* db, const std::string& q) {
  Statement s(db, fmt::format("SELECT pattern, class, coalesce(subclass, ''), coalesce(source, '') FROM {}.kernel_rule "
                              "ORDER BY priority DESC, rowid",
                              q));
  std::vector<KernelRule> out;
  while (s.step()) {
    auto text = [&](int c) {
      const unsigned char* t = sqlite3_column_text(s.get(), c);
      return t ? std::string((const char*)t, (size_t)sqlite3_column_bytes(s.get(), c)) : std::string();
    };
    KernelRule r{text(0), GpuClass::none, text(2), text(3)};
    const std::string cls = text(1);
    r.cls = cls == "communication" ? GpuClass::communication : cls == "compute" ? GpuClass::compute : GpuClass::none;
    if (r.cls == GpuClass::none)
      throw SqlError(fmt::format("kernel_rule '{}': class '{}' is not 'communication' or 'compute'", r.pattern, cls));
    if (r.pattern.size() > kMaxPattern || (size_t)std::count(r.pattern.begin(), r.pattern.end(), '*') > kMaxStars ||
        r.pattern.find('\0') != std::string::npos)
      throw SqlError(fmt::format("kernel_rule '{}': a pattern has at most {} bytes and {} '*'", r.pattern.substr(0, 60),
                                 kMaxPattern, kMaxStars));
    if (out.size() == kMaxRules) throw SqlError(fmt::format("kernel_rule: more than {} rules", kMaxRules));
    out.push_back(std::move(r));
  }
  return out;
}
}  // namespace

const KernelRules& KernelRules::shipped() {
  // The asset run into a database of its own: sql/kernel_rules.sql stays the one list.
  static const KernelRules rules = [] {
    sqlite3* db = nullptr;
    sqlite3_open(":memory:", &db);
    std::vector<KernelRule> r;
    try {
      exec_sql(db, sql_for("kernel_rules", "main"));
      r = read_rules(db, "main");
    } catch (const std::exception&) {
    }
    sqlite3_close(db);
    return KernelRules(std::move(r));
  }();
  return rules;
}

KernelRules KernelRules::read(sqlite3* db, const std::string& schema) {
  const std::string q = schema_sql(db, schema);
  sqlite3_stmt* probe = nullptr;
  const bool has =
      sqlite3_prepare_v2(db, fmt::format("SELECT 1 FROM {}.kernel_rule", q).c_str(), -1, &probe, nullptr) == SQLITE_OK;
  sqlite3_finalize(probe);
  return has ? KernelRules(read_rules(db, q)) : shipped();
}

bool communication_context(Kind kind, std::string_view name) {
  if (kind != Kind::cpu_op && kind != Kind::annotation) return false;
  if (communication_op(name)) return true;
  const std::string l = lowercase(name);
  for (size_t i = 0; i < l.size();) {
    size_t j = i;
    while (j < l.size() && std::isalnum((unsigned char)l[j])) ++j;
    const std::string_view word(l.data() + i, j - i);
    if (word == "dispatch" || word == "combine") return true;
    i = j + 1;
  }
  return false;
}

GpuClass classify_gpu(Kind kind, std::string_view name, GpuRule rule, const KernelRules& rules,
                      bool under_communication) {
  auto by_rules = [&] {
    if (const KernelRule* r = rules.match(name)) return r->cls;
    return under_communication ? GpuClass::communication : GpuClass::compute;
  };
  switch (kind) {
    case Kind::memcpy: return GpuClass::memcpy;
    case Kind::memset:
      if (rule != GpuRule::tracelens) return GpuClass::memset;
      return by_rules();
    case Kind::kernel:
      if (rule == GpuRule::hta)
        return lowercase(name).find("nccl") != std::string::npos ? GpuClass::communication : GpuClass::compute;
      return by_rules();
    default: return GpuClass::none;
  }
}

GpuClass classify_gpu(Kind kind, std::string_view name, GpuRule rule) {
  return classify_gpu(kind, name, rule, KernelRules::shipped(), false);
}

}  // namespace tlsql
