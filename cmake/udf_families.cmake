# The families of udf/ (docs/extending.md): every function lives in a family folder, udf/FAMILY/,
# and the build compiles every .cpp there (a glob), so adding udf/FAMILY/NAME.cpp is the whole
# change: the file registers its functions itself (TLSQL_FUNCTIONS, udf/registry.h).
#
# The folders are enforced as the layers are: a .cpp or .h outside a known family folder (or in a
# folder below one) stops the configure, and each family is compiled with an include path that
# shows it only the udf/ root's headers, its own folder and the families it uses (below), so an
# include of another family's header fails to compile (layering/family_include_fails).
#
# Also run in script mode by the suite (layering/udf_stray_file): cmake -DROOT=DIR -P this file.

if(CMAKE_SCRIPT_MODE_FILE)
  cmake_minimum_required(VERSION 3.22)  # the policies of the project (IN_LIST) in script mode
endif()

# In .help order.
set(TLSQL_UDF_FAMILIES tree perf names stats analysis diff replay)
# What each family may include besides the udf/ root and itself, transitively closed (a header of
# perf includes tree's, so whoever uses perf uses tree too).
set(TLSQL_UDF_USES_tree names)
set(TLSQL_UDF_USES_perf tree names)
set(TLSQL_UDF_USES_names "")
set(TLSQL_UDF_USES_stats tree perf names)
set(TLSQL_UDF_USES_analysis tree names)
set(TLSQL_UDF_USES_diff tree perf names)
set(TLSQL_UDF_USES_replay tree names)
# The glue at udf/'s root: the registry, the function kits, the per-connection state, the GPU-work
# classifier. Not a place for functions.
set(TLSQL_UDF_GLUE connection_cache.cpp gpu_class.cpp gpu_class_schema.cpp registry.cpp sql_function.cpp
                   table_function.cpp)

# Sets TLSQL_UDF_SOURCES_<family> (paths from ROOT) and TLSQL_UDF_GLUE_SOURCES in the caller's
# scope; stops with one line naming the file when one is out of place.
function(tlsql_udf_sources root)
  set(rerun CONFIGURE_DEPENDS)  # a new file reconfigures the build; not in script mode (the test)
  if(CMAKE_SCRIPT_MODE_FILE)
    set(rerun "")
  endif()
  file(GLOB_RECURSE files ${rerun} RELATIVE ${root}/udf ${root}/udf/*.cpp ${root}/udf/*.h)
  list(SORT files)
  foreach(family ${TLSQL_UDF_FAMILIES})
    set(sources_${family} "")
  endforeach()
  set(glue "")
  foreach(f ${files})
    if(f MATCHES "^[^/]+$")
      if(f MATCHES "\\.cpp$")
        if(NOT f IN_LIST TLSQL_UDF_GLUE)
          message(FATAL_ERROR "udf/${f}: a function goes in a family folder, udf/FAMILY/${f} "
                              "(families: ${TLSQL_UDF_FAMILIES}; docs/extending.md)")
        endif()
        list(APPEND glue udf/${f})
      endif()
    elseif(f MATCHES "^([^/]+)/[^/]+$")
      set(family ${CMAKE_MATCH_1})
      if(NOT family IN_LIST TLSQL_UDF_FAMILIES)
        message(FATAL_ERROR "udf/${f}: udf/${family}/ is not a family (families: ${TLSQL_UDF_FAMILIES}; "
                            "a new one is a line in cmake/udf_families.cmake: docs/extending.md)")
      endif()
      if(f MATCHES "\\.cpp$")
        list(APPEND sources_${family} udf/${f})
      endif()
    else()
      message(FATAL_ERROR "udf/${f}: a family is one folder deep (udf/FAMILY/NAME.cpp; docs/extending.md)")
    endif()
  endforeach()
  foreach(family ${TLSQL_UDF_FAMILIES})
    set(TLSQL_UDF_SOURCES_${family} ${sources_${family}} PARENT_SCOPE)
  endforeach()
  set(TLSQL_UDF_GLUE_SOURCES ${glue} PARENT_SCOPE)
endfunction()

# The include view of one family (as tlsql_layer's): args/ and src/ whole, and a udf/ folder of
# links to the root's headers, the family's own folder and the folders of the families it uses.
function(tlsql_udf_family_view target family)
  set(view ${CMAKE_BINARY_DIR}/layers/${target})
  file(MAKE_DIRECTORY ${view}/udf)
  foreach(folder args src)
    if(NOT EXISTS ${view}/${folder})
      file(CREATE_LINK ${CMAKE_SOURCE_DIR}/${folder} ${view}/${folder} SYMBOLIC)
    endif()
  endforeach()
  file(GLOB headers CONFIGURE_DEPENDS RELATIVE ${CMAKE_SOURCE_DIR}/udf ${CMAKE_SOURCE_DIR}/udf/*.h)
  foreach(entry ${headers} ${family} ${TLSQL_UDF_USES_${family}})
    if(NOT EXISTS ${view}/udf/${entry})
      file(CREATE_LINK ${CMAKE_SOURCE_DIR}/udf/${entry} ${view}/udf/${entry} SYMBOLIC)
    endif()
  endforeach()
  target_include_directories(${target} PRIVATE ${view})
endfunction()

if(CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE)
  tlsql_udf_sources(${ROOT})
  foreach(family ${TLSQL_UDF_FAMILIES})
    message(STATUS "${family}: ${TLSQL_UDF_SOURCES_${family}}")
  endforeach()
endif()
