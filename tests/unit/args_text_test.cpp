#include "src/args_text.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "src/json_scan.h"

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
  REQUIRE(dec.data() == buf.data());
  REQUIRE(buf.size() >= dec.size() + TextArena::kSlack);
  CHECK(std::string_view(dec.data() + dec.size(), TextArena::kSlack) == std::string(TextArena::kSlack, ' '));
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
  // Base-64 digits, low first, the last marked 0xC0: 0 -> C0; 65535 = 63 + 63 * 64 + 15 * 4096.
  CHECK(args_text::key_token("k0", keys) == "\x01\xc0");
  CHECK(args_text::key_token("k65535", keys) == "\x01\xbf\xbf\xcf");
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

TEST_CASE("one member is found in an encoded text without decoding the rest") {
  StringPool keys;
  StringPool::Cache cache(keys);
  // Enough keys before the ones looked up that their tokens take three bytes (ids >= 64).
  std::string enc;
  for (int i = 0; i < 70; ++i) REQUIRE(args_text::encode("{\"pad" + std::to_string(i) + "\":0}", cache, enc));
  const std::string text =
      R"({"External id":7,"Input Dims":[[2,3],[]],"nested":{"Input Dims":1,"x":[{"y":"}"}]},"s":"a,\"b\":c",)"
      R"("Input type":["float",""],"empty":{}})";
  enc.clear();
  REQUIRE(args_text::encode(text, cache, enc));
  std::string buf;
  // One key's value (find_members for one key, decoded as a reader gets it).
  auto find = [&](std::string_view stored, std::string_view key, const StringPool& dict) {
    std::string_view raw;
    args_text::find_members(stored, {&key, 1}, {&raw, 1});
    return std::string(args_text::member_value(raw, dict, buf));
  };
  auto member = [&](std::string_view key) { return find(enc, args_text::stored_key(key, keys), keys); };
  CHECK(member("Input Dims") == "[[2,3],[]]");  // the top-level one, not the nested object's
  CHECK(member("External id") == "7");
  CHECK(member("Input type") == R"(["float",""])");
  CHECK(member("nested") == R"({"Input Dims":1,"x":[{"y":"}"}]})");  // a value with tokens: decoded
  CHECK(member("s") == R"("a,\"b\":c")");
  CHECK(member("empty") == "{}");
  CHECK(member("missing").empty());
  CHECK(args_text::stored_key("missing", keys) == "\"missing\":");
  // A key the dictionary refused is found as its text.
  StringPool none;
  CHECK(find(R"({"a":1,"b":[2]})", args_text::stored_key("b", none), none) == "[2]");
  CHECK(find("[1]", "\"a\":", none).empty());
  CHECK(find("{}", "\"a\":", none).empty());
  // Several keys in one walk: each the value it has when asked alone, whatever the order asked,
  // the absent one empty, and the top-level member, not the nested one.
  const std::vector<std::string> asked = {"Input type", "missing", "nested", "Input Dims", "External id"};
  std::vector<std::string> stored;
  for (const auto& k : asked) stored.push_back(args_text::stored_key(k, keys));
  const std::vector<std::string_view> views(stored.begin(), stored.end());
  std::vector<std::string_view> raw(asked.size(), "stale");
  args_text::find_members(enc, views, raw);
  for (size_t i = 0; i < asked.size(); ++i) {
    std::string other;
    CHECK(std::string(args_text::member_value(raw[i], keys, other)) == member(asked[i]));
  }
  CHECK(raw[1].empty());
  args_text::find_members("[1]", views, raw);
  CHECK(std::all_of(raw.begin(), raw.end(), [](std::string_view v) { return v.empty(); }));
}

// last_members reads the members as a whole-document parse (nlohmann, the perf models' reader)
// does: a key given twice is its last value, and where the parse could read a key another way or
// the walk cannot read one object, it says so (false) for the caller to parse the whole text.
TEST_CASE("last_members: the members a whole-document parse reads, or false") {
  StringPool keys;
  StringPool::Cache cache(keys);
  std::string enc;
  REQUIRE(args_text::encode(R"({"Input Dims":[[64,128]],"x":{"Input Dims":1,"Input type":2},"Input Dims":[[16,8]],)"
                            R"("Input type":["float"]})",
                            cache, enc));
  const std::string dims = args_text::stored_key("Input Dims", keys), types = args_text::stored_key("Input type", keys),
                    absent = args_text::stored_key("Concrete Inputs", keys);
  const std::array<std::string_view, 3> asked{dims, types, absent};
  std::array<std::string_view, 3> raw{"stale", "stale", "stale"};
  REQUIRE(args_text::last_members(enc, asked, raw));
  CHECK(raw[0] == "[[16,8]]");  // the last of two, not the first, nor the nested object's
  CHECK(raw[1] == R"(["float"])");
  CHECK(raw[2].empty());
  // An empty object: read, nothing found.
  CHECK(args_text::last_members("{}", asked, raw));
  CHECK((raw[0].empty() && raw[1].empty() && raw[2].empty()));
  // Keys the dictionary refused are read as their text; one written with an escape may be any key
  // to a parse ("Input\u0020Dims" is "Input Dims"): false.
  StringPool none;
  const std::string plain = args_text::stored_key("Input Dims", none);
  const std::array<std::string_view, 1> one{plain};
  std::array<std::string_view, 1> got{};
  CHECK(args_text::last_members(R"({"a":1,"Input Dims":[[2]]})", one, got));
  CHECK(got[0] == "[[2]]");
  CHECK_FALSE(args_text::last_members(R"({"Input\u0020Dims":[[2]]})", one, got));
  CHECK_FALSE(args_text::last_members(R"({"Input Dims":[[2]],"a\"b":1})", one, got));
  // Not one object read to its brace: an array, a text cut short, a trailing comma, no value.
  for (const char* bad : {"[1]", R"({"Input Dims":[[2]])", R"({"Input Dims":[[2]],})", R"({"Input Dims":})", "{"})
    CHECK_FALSE(args_text::last_members(bad, one, got));
}

// minify_encode is minify then encode in one walk: the same bytes for every text the two-step
// path keys, and `false` (the caller takes the two steps) exactly where it must.
TEST_CASE("minify_encode: the same stored bytes as json_scan::minify then encode") {
  StringPool keys_a, keys_b;
  StringPool::Cache a(keys_a), b(keys_b);
  const std::string long_key(300, 'k');  // past kMaxKeyBytes: written as it is
  const std::vector<std::string> texts = {
      "{}",
      "{\n      \"External id\": 1, \"Input Dims\": [[2, 3], []],\n      \"Input type\": [\"float\", \"\"]\n    }",
      R"({"a" : "b:c", "d":{"e"	:[1,{"f":"g\"h:"}]}, "s":"x\\", "t": "\\\"" })",
      R"({"n\u0061me": 1, "plain": "v\u0041", "\ud83d\ude00": 2})",
      "{\"" + long_key + "\": 1, \"short\": 2}",
      "[1, 2, {\"k\": [true, false, null]}]",
      "\"just a string\"",
      "  -12.5e3  ",
      "{\"a\":\"   spaces   kept   \",\"b\":\"tab\\tescaped\"}",
      std::string("{\"") + std::string(40, 'x') + "\":\"" + std::string(100, 'y') + "\"}",
  };
  for (const std::string& t : texts) {
    CAPTURE(t);
    std::string one, two;
    REQUIRE(args_text::minify_encode(t, a, one));
    REQUIRE(args_text::encode(json_scan::minify(t), b, two));
    // Token ids may differ between the two dictionaries only if keys came in another order: they
    // come in the same order here, so the bytes are equal.
    CHECK(one == two);
    std::string buf_a, buf_b;  // (escaped keys come back as the key they spell, both ways)
    CHECK(args_text::decode(one, keys_a, buf_a) == args_text::decode(two, keys_b, buf_b));
  }
  std::string out;
  CHECK_FALSE(args_text::minify_encode(std::string("{\"a\":\"\x01\"}"), a, out));  // encode() refuses it
  CHECK_FALSE(args_text::minify_encode("{\"a\":\"open", a, out));                  // a string left open
  CHECK_FALSE(args_text::minify_encode(std::string("{\"a\":\x02}"), a, out));      // a control byte outside one
  std::string deep(1001, '[');
  deep += std::string(1001, ']');
  CHECK_FALSE(args_text::minify_encode(deep, a, out));  // the depth check must look
  std::string ok(1000, '[');
  ok += std::string(1000, ']');
  out.clear();
  CHECK(args_text::minify_encode(ok, a, out));
  CHECK(out == ok);
}

// minify_encode_object reads one object from where it starts, its end found by the walk, with the
// text after it (the rest of a trace's event, the next events) left unread: the bytes
// minify_encode writes for the object alone, its length, and its outer members where they lie.
TEST_CASE("minify_encode_object: one object's bytes, length and outer members") {
  StringPool keys_a, keys_b;
  StringPool::Cache a(keys_a), b(keys_b);
  const std::vector<std::string> objects = {
      "{}",
      "{\n      \"External id\": 1, \"Input Dims\": [[2, 3], []],\n      \"Input type\": [\"float\", \"}\"]\n    }",
      R"({"a" : "b:c", "d":{"e"	:[1,{"f":"g\"h:}"}]}, "s":"x\\", "t": "\\\"" })",
      R"({"n\u0061me": 1, "": {"inner": 2}, "last" :  -3.5 })",
  };
  const std::vector<std::vector<std::string>> keys = {
      {}, {"External id", "Input Dims", "Input type"}, {"a", "d", "s", "t"}, {"n\\u0061me", "", "last"}};
  const std::vector<std::vector<std::string>> values = {
      {}, {"1", "[", "["}, {"\"b:c\"", "{", "\"x", "\""}, {"1", "{", "-3.5"}};
  for (size_t i = 0; i < objects.size(); ++i) {
    const std::string& o = objects[i];
    CAPTURE(o);
    const std::string text = o + ",\"dur\": 5}, {\"ph\": \"X\"}]";  // what follows args in a chunk
    std::string one, two;
    std::vector<args_text::Member> members;
    CHECK(args_text::minify_encode_object(text.data(), text.data() + text.size(), a, one, members) == o.size());
    REQUIRE(args_text::minify_encode(o, b, two));
    CHECK(one == two);
    REQUIRE(members.size() == keys[i].size());
    for (size_t m = 0; m < members.size(); ++m) {
      CHECK(members[m].key == keys[i][m]);
      CHECK(members[m].escaped_key == (keys[i][m].find('\\') != std::string::npos));
      CHECK(std::string_view(members[m].value, values[i][m].size()) == values[i][m]);
    }
  }
  std::vector<args_text::Member> members;
  std::string out;
  for (std::string bad : {std::string("[1]"), std::string("\"s\""), std::string("{\"a\":\"\x01\"}"),
                          std::string("{\"a\": [1, 2"), std::string("{\"a\":\"open")}) {
    CAPTURE(bad);
    CHECK(args_text::minify_encode_object(bad.data(), bad.data() + bad.size(), a, out, members) == 0);
  }
  std::string deep = "{\"a\":" + std::string(1000, '[') + std::string(1000, ']') + "}";
  CHECK(args_text::minify_encode_object(deep.data(), deep.data() + deep.size(), a, out, members) == 0);
  std::string ok = "{\"a\":" + std::string(999, '[') + std::string(999, ']') + "}, 1";
  out.clear();
  CHECK(args_text::minify_encode_object(ok.data(), ok.data() + ok.size(), a, out, members) == ok.size() - 3);
}
