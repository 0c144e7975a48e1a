#include "src/args_text.h"

#include <doctest/doctest.h>

#include <string>

using namespace tlsql;

namespace {

// Encodes `json` with `keys` and decodes it again; `size` receives the encoded size.
std::string round_trip(std::string_view json, StringPool& keys, size_t* size = nullptr) {
  StringPool::Cache cache(keys);
  std::string enc, buf;
  REQUIRE(args_text::encode(json, cache, enc));
  if (size) *size = enc.size();
  const std::string_view dec = args_text::decode(enc, keys, buf);
  // kSlack readable spaces follow the text (simdjson parses it in place)
  REQUIRE(buf.size() == dec.size() + TextArena::kSlack);
  CHECK(buf.substr(dec.size()) == std::string(TextArena::kSlack, ' '));
  return std::string(dec);
}

}  // namespace

TEST_CASE("args texts come back byte for byte, their keys stored once") {
  StringPool keys;
  const std::string kineto = R"({"External id":1,"Input Dims":[[2,3],[]],"Input type":["float",""]})";
  size_t size = 0;
  CHECK(round_trip(kineto, keys, &size) == kineto);
  // Three keys, ids 0-2, each a two-byte token: 67 bytes - (14 + 13 + 13) + 3 * 2 = 33.
  CHECK(keys.size() == 3);
  CHECK(keys.get(0) == "\"External id\":");
  CHECK(size == kineto.size() - 40 + 6);
  // The same keys again: no new entries.
  CHECK(round_trip(R"({"Input type":[],"External id":7})", keys) == R"({"Input type":[],"External id":7})");
  CHECK(keys.size() == 3);

  // Strings that look like keys are not: an escaped quote before a colon, a value followed by a
  // colon inside a string, nested objects (their keys are keys), escaped backslashes before a quote.
  for (std::string t :
       {R"({"a\":b":"c:d","e":"\":"})", R"({"n":{"m":[{"k":1}]},"s":"x\\"})", R"({"\\":"\\\\","q":"say \"hi\": ok"})",
        R"("kept as a string: \"a\":1")", R"([])", R"({})", R"({"":""})", R"({"é ü":"ÿ"})"})
    CHECK(round_trip(t, keys) == t);
  CHECK(keys.get(3) == R"("a\":b":)");  // the key with its escaped quote, byte for byte
}

TEST_CASE("args texts that are not minified JSON are kept as they are") {
  StringPool keys;
  StringPool::Cache cache(keys);
  std::string out = "kept";
  CHECK_FALSE(args_text::encode(std::string("{\"a\":\"\x01\"}"), cache, out));  // would read as a token
  CHECK_FALSE(args_text::encode("{\"a\":\n1}", cache, out));
  CHECK(out == "kept");
  CHECK(keys.size() == 0);
  // An unterminated string: copied as it is after its last key.
  std::string enc, buf;
  REQUIRE(args_text::encode(R"({"a":"open)", cache, enc));
  CHECK(args_text::decode(enc, keys, buf) == R"({"a":"open)");
}

TEST_CASE("a full dictionary leaves new keys as text, always") {
  StringPool keys;
  StringPool::Cache cache(keys);
  std::string enc;
  for (size_t i = 0; i < args_text::kMaxKeys; ++i)
    REQUIRE(args_text::encode("{\"k" + std::to_string(i) + "\":0}", cache, enc));
  CHECK(keys.size() == args_text::kMaxKeys);
  // Key 0 has a token; a new key does not, and is never added later.
  CHECK(args_text::key_token("k0", keys) == std::string("\x01\x00", 2));
  CHECK(args_text::key_token("k65535", keys) == std::string("\x01\xff\xff\x03", 4));  // 65535 = 0x7f 0x7f 3
  const std::string late = R"({"late":1,"k7":2})";
  CHECK(round_trip(late, keys) == late);
  CHECK(keys.size() == args_text::kMaxKeys);
  CHECK(args_text::key_token("late", keys).empty());
  // A key longer than kMaxKeyBytes is kept as text too.
  const std::string long_key = "{\"" + std::string(300, 'x') + "\":1}";
  StringPool fresh;
  CHECK(round_trip(long_key, fresh) == long_key);
  CHECK(fresh.size() == 0);
}
