#include "src/ascii_case.h"

#include <doctest/doctest.h>

#include "src/kind.h"

TEST_CASE("case folding is ASCII's alone, in any locale") {
  using tlsql::lowercase;
  CHECK(lowercase("AZaz09_[]@`{") == "azaz09_[]@`{");  // '@' and '[' border A-Z, '`' and '{' a-z
  // UTF-8 bytes stay as they are ("É" is C3 89); so does a Latin-1 byte (0xC9, 'É' there), which
  // std::tolower folds to 0xE9 under a Latin-1 locale.
  CHECK(lowercase("\xC3\x89T\xC9") == "\xC3\x89t\xC9");
  CHECK(lowercase("") == "");
  // A category is matched through it: Kineto's "Kernel" and a hand-written "KERNEL" alike.
  CHECK(tlsql::normalize_kind('X', "KERNEL") == tlsql::Kind::kernel);
  CHECK(tlsql::normalize_kind('X', "Cuda_Runtime") == tlsql::Kind::runtime);
}
