# Fails when a source file includes a project header from a top-level folder
# its own folder may not depend on. The allowed edges are read from the table
# in docs/architecture.md (rows "| `from/` | `to/`, `to/` |"), so the page
# and this check cannot drift apart. Each row may name only rows above it,
# which keeps the graph free of cycles. Run as: cmake -DROOT=<repo> -P this file.
cmake_policy(SET CMP0057 NEW)
if(NOT ROOT)
  message(FATAL_ERROR "pass -DROOT=<repository root>")
endif()

file(STRINGS "${ROOT}/docs/architecture.md" rows REGEX "^\\| `[a-z_]+/` \\|")
set(folders "")
foreach(row IN LISTS rows)
  string(REGEX MATCH "^\\| `([a-z_]+)/` \\|([^|]*)\\|" _ "${row}")
  set(from "${CMAKE_MATCH_1}")
  string(REGEX MATCHALL "`[a-z_]+/`" targets "${CMAKE_MATCH_2}")
  set(allowed_${from} "${from}")
  foreach(t IN LISTS targets)
    string(REGEX REPLACE "`([a-z_]+)/`" "\\1" t "${t}")
    # A row may name only rows above it: the graph then has no cycle.
    if(NOT t IN_LIST folders)
      message(SEND_ERROR "docs/architecture.md: ${from}/ may include ${t}/, which is not a row above it "
                         "(every edge must point up the table, so that the graph has no cycle)")
    endif()
    list(APPEND allowed_${from} "${t}")
  endforeach()
  list(APPEND folders "${from}")
endforeach()
if(NOT folders)
  message(FATAL_ERROR "docs/architecture.md has no dependency table")
endif()

set(violations 0)
foreach(from IN LISTS folders)
  file(GLOB_RECURSE sources LIST_DIRECTORIES false
       "${ROOT}/${from}/*.h" "${ROOT}/${from}/*.cc" "${ROOT}/${from}/*.cu" "${ROOT}/${from}/*.cuh"
       "${ROOT}/${from}/*.in")
  foreach(src IN LISTS sources)
    file(STRINGS "${src}" includes REGEX "^[ \t]*#[ \t]*include[ \t]+\"[a-z_]+/")
    foreach(line IN LISTS includes)
      string(REGEX MATCH "\"([a-z_]+)/" _ "${line}")
      set(to "${CMAKE_MATCH_1}")
      # Generated proto headers are included as "perfgate/v1/..." and
      # "grpc/health/...": they belong to proto/.
      if(to STREQUAL "perfgate" OR to STREQUAL "grpc")
        set(to "proto")
      endif()
      list(FIND folders "${to}" known)
      if(known EQUAL -1)
        continue()  # a system or library header, not a top-level folder
      endif()
      list(FIND allowed_${from} "${to}" ok)
      if(ok EQUAL -1)
        file(RELATIVE_PATH rel "${ROOT}" "${src}")
        message(SEND_ERROR "${rel}: ${from}/ may not include ${to}/ (${line}); "
                           "docs/architecture.md lists what ${from}/ may depend on")
        math(EXPR violations "${violations} + 1")
      endif()
    endforeach()
  endforeach()
endforeach()
if(violations GREATER 0)
  message(FATAL_ERROR "${violations} include(s) break the folder graph")
endif()
message(STATUS "include graph: every include follows docs/architecture.md")
