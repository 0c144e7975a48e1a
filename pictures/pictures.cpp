#include "pictures/pictures.h"

extern "C" const tlsql::PictureFunctions* tlsql_picture_functions() {
  using namespace tlsql;
  static const PictureFunctions table{chart_format, roofline_chart, timeline_chart,
                                      memory_chart, diff_chart,     html_report};
  return &table;
}
