#include "repl/dot_commands.h"

#include <fmt/format.h>
#include <strings.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "session/suggest.h"

namespace tlsql {

namespace {

// A form's lead as .help shows it: ".exit / .quit [CODE]", ".plot roofline FILE ...".
std::string lead(const DotCommand& c, const DotCommand::Form& f) {
  std::string s;
  for (std::string_view n : c.names) s += (s.empty() ? "" : " / ") + std::string(n);
  return f.arguments.empty() ? s : s + " " + std::string(f.arguments);
}

// The column a row's help text starts at: kHelpIndent, or two past its longest lead.
size_t text_column(const DotCommand& c) {
  size_t longest = 0;
  for (const auto& f : c.forms) longest = std::max(longest, lead(c, f).size());
  return longest < kHelpIndent ? kHelpIndent : longest + 2;
}

}  // namespace

bool parse_int(const std::string& s, int64_t& v) {
  char* end = nullptr;
  if (s.empty()) return false;
  v = std::strtoll(s.c_str(), &end, 10);
  return *end == 0;
}

std::string maybe_meant(const std::string& typed, const std::vector<std::string>& known) {
  const auto m = did_you_mean(typed, known);
  return m ? fmt::format("did you mean {}? ", *m) : "";
}

std::optional<std::string> where_after(const std::string& line, size_t words) {
  size_t p = 0;
  for (size_t i = 0; i < words; ++i) {
    p = line.find_first_not_of(" \t", p);
    if (p == std::string::npos) return "";
    p = line.find_first_of(" \t", p);
    if (p == std::string::npos) return "";
  }
  p = line.find_first_not_of(" \t", p);
  if (p == std::string::npos) return "";
  if (line.size() - p < 6 || strncasecmp(line.c_str() + p, "WHERE", 5) != 0 || !isspace((unsigned char)line[p + 5]))
    return std::nullopt;
  return line.substr(p + 6);
}

const std::vector<DotCommand>& dot_command_table() {
  static const std::vector<DotCommand> table = [] {
    std::vector<DotCommand> t = sqlite3_command_rows();
    for (DotCommand& c : tlsql_command_rows()) t.push_back(std::move(c));
    std::sort(t.begin(), t.end(), [](const DotCommand& a, const DotCommand& b) { return a.names[0] < b.names[0]; });
    return t;
  }();
  return table;
}

const DotCommand* find_dot_command(std::string_view name) {
  for (const DotCommand& c : dot_command_table())
    if (std::find(c.names.begin(), c.names.end(), name) != c.names.end() || c.unlisted_alias == name) return &c;
  return nullptr;
}

const std::vector<std::string>& dot_command_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const DotCommand& c : dot_command_table()) {
      for (std::string_view n : c.names) v.emplace_back(n);
      if (!c.unlisted_alias.empty()) v.emplace_back(c.unlisted_alias);
    }
    return v;
  }();
  return names;
}

std::vector<std::string> listed_dot_command_names() {
  std::vector<std::string> v;
  for (const DotCommand& c : dot_command_table())
    for (std::string_view n : c.names) v.emplace_back(n);
  return v;
}

std::string dot_command_usage(const DotCommand& c, std::string_view typed) {
  const std::string_view args = c.forms.empty() ? std::string_view() : c.forms[0].arguments;
  return fmt::format("usage: {}{}{}", typed, args.empty() ? "" : " ", args);
}

std::string dot_command_help_text(std::string_view prefix) {
  std::string out;
  for (const DotCommand& c : dot_command_table()) {
    const size_t column = text_column(c);
    for (const auto& f : c.forms) {
      const std::string l = lead(c, f);
      if (!l.starts_with(prefix)) continue;
      std::string_view help = f.help;
      const size_t nl = help.find('\n');
      out += fmt::format("{:<{}}{}\n", l, column, help.substr(0, nl));
      for (size_t at = nl; at != std::string_view::npos;) {
        const size_t next = help.find('\n', at + 1);
        out += fmt::format("{:<{}}{}\n", "", kHelpIndent, help.substr(at + 1, next - at - 1));
        at = next;
      }
    }
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> dot_command_help_entries(std::string_view prefix) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const DotCommand& c : dot_command_table())
    for (const auto& f : c.forms)
      if (std::string l = lead(c, f); l.starts_with(prefix)) {
        std::string text(f.help);
        std::replace(text.begin(), text.end(), '\n', ' ');
        out.emplace_back(std::move(l), std::move(text));
      }
  return out;
}

}  // namespace tlsql
