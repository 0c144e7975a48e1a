// How the aligned modes show a REAL (session/output.h readable_real), by hand.
#include "session/output.h"

#include <doctest/doctest.h>

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
