# Writes OUT: a C++ file holding every SQL_DIR/*.sql as a named string (the function FN, declared
# in HEADER), so queries ship in the binary.
file(GLOB files ${SQL_DIR}/*.sql)
list(SORT files)
set(body "// Generated from ${SQL_DIR}/*.sql by scripts/embed_sql.cmake. Do not edit.\n#include \"${HEADER}\"\nnamespace tlsql {\nconst std::vector<SqlAsset>& ${FN}() {\n  static const std::vector<SqlAsset> assets = {\n")
foreach(f ${files})
  get_filename_component(name ${f} NAME_WE)
  file(READ ${f} text)
  string(APPEND body "    {\"${name}\", R\"tlsql_sql(${text})tlsql_sql\"},\n")
endforeach()
string(APPEND body "  };\n  return assets;\n}\n}  // namespace tlsql\n")
file(WRITE ${OUT}.tmp "${body}")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
