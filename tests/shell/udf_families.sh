#!/bin/sh
# The udf/ family folders (cmake/udf_families.cmake), as the configure applies them: the
# repository's files pass and land in their families; a .cpp at udf/'s root that is not glue, a
# folder that is no family and a folder below a family each stop it with a line naming the file.
# usage: udf_families.sh CMAKE SOURCE_DIR TMP_DIR
cmake=$1 src=$2 tmp=$3
script=$src/cmake/udf_families.cmake
fail=0
check() { if [ "$1" = 0 ]; then echo "ok   $2"; else echo "FAIL $2"; fail=1; fi; }

out=$("$cmake" -DROOT="$src" -P "$script" 2>&1)
check $? "the repository's udf/ passes"
echo "$out" | grep -q "stats: .*udf/stats/trace_kinds.cpp"; check $? "udf/stats/trace_kinds.cpp is in the stats family"

rejects() {  # FILE EXPECTED: a tree of one family file plus FILE stops the configure with EXPECTED
  rm -rf "$tmp" && mkdir -p "$tmp/udf/stats" "$(dirname "$tmp/udf/$1")" && touch "$tmp/udf/stats/ok.cpp" "$tmp/udf/$1"
  out=$("$cmake" -DROOT="$tmp" -P "$script" 2>&1)
  [ $? != 0 ] && echo "$out" | grep -q "$2"
  check $? "udf/$1 is refused: $2"
}
rejects stray.cpp "udf/stray.cpp: a function goes in a family folder"
rejects nofamily/f.cpp "udf/nofamily/f.cpp: udf/nofamily/ is not a family"
rejects stats/deeper/f.cpp "udf/stats/deeper/f.cpp: a family is one folder deep"
rm -rf "$tmp"
exit $fail
