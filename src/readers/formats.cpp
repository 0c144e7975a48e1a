// The one list of input formats. Adding a format: its folder src/readers/NAME/ and one line here
// (docs/architecture.md, "Where to add an input format").
#include "src/readers/kineto_json/kineto_json.h"
#include "src/readers/reader.h"

namespace tlsql {

std::span<const ReaderFormat> builtin_formats() {
  static const ReaderFormat formats[] = {
      kineto_json::format,  // last: it reads what no other format claims (and says why it is no trace)
  };
  return formats;
}

const ReaderFormat& choose_format(std::span<const ReaderFormat> formats, std::string_view head) {
  for (const ReaderFormat& f : formats)
    if (f.claims(head)) return f;
  return formats.back();
}

}  // namespace tlsql
