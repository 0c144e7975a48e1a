// How results are written (session/output.h): the aligned modes' REALs (readable_real) and CSV quoting, by hand.
#include "session/output.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <optional>
#include <string>

using tlsql::readable_real;

TEST_CASE("3 decimals from 1 up, thousands separated") {
  CHECK(readable_real(13214.178693) == "13,214.179");
  CHECK(readable_real(45.0) == "45.0");
  CHECK(readable_real(7.86107361511838) == "7.861");
  CHECK(readable_real(-1234567.5) == "-1,234,567.5");
  CHECK(readable_real(999.9996) == "1,000.0");
  CHECK(readable_real(100.0) == "100.0");
}

TEST_CASE("3 significant digits below 1, never an exponent") {
  CHECK(readable_real(3.8e-05) == "0.000038");
  CHECK(readable_real(0.0573208882178706) == "0.0573");
  CHECK(readable_real(-0.5) == "-0.5");
  CHECK(readable_real(0.0) == "0.0");
  CHECK(readable_real(0.9996) == "1.0");
}

TEST_CASE("csv: a field with a comma, quote or line break is quoted, its quotes doubled (RFC 4180)") {
  tlsql::ResultSet rs;
  rs.columns = {"a,b", "plain"};
  rs.rows = {{std::string("x\"y,z"), std::string("p")},
             {std::string("\"\""), std::string("line\nbreak")},
             {std::string("cr\r"), std::nullopt},
             {std::string("[\"k1\",\"k2\"]"), std::string("")}};
  rs.numeric = {false, false};
  rs.is_real = {{false, false}, {false, false}, {false, false}, {false, false}};
  tlsql::OutputOptions opt;
  opt.mode = tlsql::OutputMode::csv;
  FILE* f = tmpfile();
  REQUIRE(f);
  tlsql::print_result(f, rs, opt);
  std::rewind(f);
  std::string got;
  for (int c; (c = std::fgetc(f)) != EOF;) got += (char)c;
  std::fclose(f);
  CHECK(got ==
        "\"a,b\",plain\n"
        "\"x\"\"y,z\",p\n"
        "\"\"\"\"\"\",\"line\nbreak\"\n"
        "\"cr\r\",\n"
        "\"[\"\"k1\"\",\"\"k2\"\"]\",\n");
}
