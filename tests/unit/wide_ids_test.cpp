// Id32 / WideIds (src/event_store.h): an event's ids in 32 bits, values beyond kept aside; and
// StringPool::Cache, a parser thread's flat table in front of the shared string pool.
#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "src/event_store.h"

using tlsql::Id32;
using tlsql::kNull;
using tlsql::WideIds;

TEST_CASE("ids: small values in the row, wide ones by code, each value back as it was") {
  WideIds ids;
  CHECK(ids.id(kNull).null());
  CHECK(ids.value(Id32{}) == kNull);
  // [-2^30, 2^31): the value itself, nothing kept aside.
  for (int64_t v : {int64_t(0), int64_t(-1), int64_t(7), -(int64_t(1) << 30), int64_t(INT32_MAX)}) {
    CHECK(ids.id(v).v == v);
    CHECK(ids.value(ids.id(v)) == v);
  }
  CHECK(ids.size() == 0);
  // Beyond: a code below -2^30, one per distinct value, the same code for the same value.
  const std::vector<int64_t> wide = {-(int64_t(1) << 30) - 1, int64_t(INT32_MAX) + 1, INT32_MIN, INT64_MAX,
                                     INT64_MIN + 1,           int64_t(1) << 40};
  std::vector<Id32> codes;
  for (int64_t v : wide) codes.push_back(ids.id(v));
  for (size_t i = 0; i < wide.size(); ++i) {
    CHECK(!codes[i].null());
    CHECK(codes[i].v < WideIds::kLow);
    CHECK(ids.value(codes[i]) == wide[i]);
    CHECK(ids.id(wide[i]) == codes[i]);
    for (size_t j = 0; j < i; ++j) CHECK(codes[i] != codes[j]);
  }
  CHECK(ids.size() == wide.size());
}

TEST_CASE("ids: through the table's growth, values alike in their low bits") {
  // Nsight's scoped correlation ids (pid * 10^10 + id) and values that differ only in their high
  // bits (multiples of 2^32 and of 2^48): 90,000 values make the table grow from 1,024 slots to
  // 262,144. (A hash of the low bits alone put the multiples of 2^48 in one run of slots: ~18,000
  // probes an insert.)
  WideIds ids;
  std::vector<int64_t> values;
  for (int64_t i = 0; i < 30000; ++i) values.push_back(int64_t(4242) * 10000000000 + i);
  for (int64_t i = 1; i <= 30000; ++i) values.push_back(i << 32);
  for (int64_t i = 1; i <= 30000; ++i) values.push_back((i << 48) | 1);
  std::vector<Id32> codes;
  for (int64_t v : values) codes.push_back(ids.id(v));
  CHECK(ids.size() == values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    CHECK(ids.value(codes[i]) == values[i]);
    CHECK(ids.id(values[i]) == codes[i]);  // found again after every growth
  }
  CHECK(ids.size() == values.size());
}

TEST_CASE("ids: several threads at once agree on each value's code") {
  WideIds ids;
  std::vector<std::vector<Id32>> got(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < got.size(); ++t)
    threads.emplace_back([&, t] {
      for (int64_t i = 0; i < 2000; ++i) got[t].push_back(ids.id((int64_t(1) << 33) + i % 500));
    });
  for (auto& th : threads) th.join();
  CHECK(ids.size() == 500);
  for (size_t t = 1; t < got.size(); ++t) CHECK(got[t] == got[0]);
  for (int64_t i = 0; i < 2000; ++i) CHECK(ids.value(got[0][(size_t)i]) == (int64_t(1) << 33) + i % 500);
}

TEST_CASE("string pool: a thread's cache gives the pool's id for every string, through growth") {
  using tlsql::StringPool;
  StringPool pool;
  StringPool::Cache a(pool), b(pool);
  // 5000 strings: the flat table grows from 1024 slots several times; lengths 0-40 cover the
  // hash's 8-byte words and every tail length; "" is a string like any other.
  std::vector<std::string> words;
  for (int i = 0; i < 5000; ++i) words.push_back(std::string(i % 41, 'x') + std::to_string(i / 41));
  words.push_back("");
  std::vector<uint32_t> ids;
  for (const std::string& w : words) ids.push_back(a.intern(w));
  for (size_t i = 0; i < words.size(); ++i) {
    CHECK(pool.get(ids[i]) == words[i]);
    CHECK(a.intern(words[i]) == ids[i]);  // a hit in the cache
    CHECK(b.intern(words[i]) == ids[i]);  // another thread's cache: a miss, the pool's id
  }
  CHECK(pool.size() == words.size());
  // Strings equal but for one byte, and equal prefixes, are distinct.
  CHECK(a.intern("abcdefgh1") != a.intern("abcdefgh2"));
  CHECK(a.intern("abcdefgh") !=
        a.intern(std::string_view("abcdefgh\0", 9)));  // (a NUL: zero-padded tails differ by length)
  // The pool's cap: a new string past it is kNone, a known one still has its id.
  CHECK(a.intern("new one", pool.size()) == StringPool::kNone);
  CHECK(a.intern(words[7], pool.size()) == ids[7]);
}

TEST_CASE("string pool: caches on several threads agree on every id") {
  using tlsql::StringPool;
  StringPool pool;
  std::vector<std::vector<uint32_t>> got(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < got.size(); ++t)
    threads.emplace_back([&, t] {
      StringPool::Cache c(pool);
      for (int i = 0; i < 3000; ++i) got[t].push_back(c.intern("name " + std::to_string((i * 7 + t * 13) % 3000)));
    });
  for (auto& th : threads) th.join();
  CHECK(pool.size() == 3000);
  for (size_t t = 0; t < got.size(); ++t)
    for (int i = 0; i < 3000; ++i) CHECK(pool.get(got[t][i]) == "name " + std::to_string((i * 7 + t * 13) % 3000));
}

// StringPool::Cache hashes strings of up to 16 bytes as two words that cover all their bytes and
// compares them the same way: every byte must still tell one string from another. Strings of
// every length to 40 that differ from a base in one byte (at each place), with embedded NULs and
// bytes past 0x7F, interned through two caches of one pool (two parser threads) in two orders:
// one id per distinct string, the string it names.
TEST_CASE("StringPool::Cache: one id per string, whichever bytes differ") {
  using tlsql::StringPool;
  std::vector<std::string> strings;
  for (size_t len = 0; len <= 40; ++len) {
    const std::string base(len, 'a');
    strings.push_back(base);
    for (size_t i = 0; i < len; ++i)
      for (char c : {'b', '\0', '\xff'}) {
        std::string s = base;
        s[i] = c;
        strings.push_back(s);
      }
  }
  StringPool pool;
  StringPool::Cache one(pool), two(pool);
  std::map<std::string, uint32_t> ids;
  for (const std::string& s : strings) ids.emplace(s, one.intern(s));
  for (size_t k = strings.size(); k-- > 0;) {
    CAPTURE(strings[k].size());
    CHECK(two.intern(strings[k]) == ids.at(strings[k]));
    CHECK(one.intern(strings[k]) == ids.at(strings[k]));
  }
  std::set<uint32_t> distinct;
  for (const auto& [s, id] : ids) {
    distinct.insert(id);
    CHECK(pool.get(id) == s);
  }
  CHECK(distinct.size() == ids.size());
  CHECK(pool.size() == ids.size());
}
