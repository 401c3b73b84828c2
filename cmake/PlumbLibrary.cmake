# plumb_precompile(TARGET): the headers nearly every file includes (nlohmann/json.hpp alone
# costs ~5 s per file on the 2-core CI machine) compiled once per target. PLUMB_PCH=OFF
# turns it off (to check that every file includes what it uses).
option(PLUMB_PCH "Precompile the common headers" ON)
function(plumb_precompile target)
  if(PLUMB_PCH)
    target_precompile_headers(${target} PRIVATE <nlohmann/json.hpp> <fmt/format.h> <string>
                              <vector> <map> <set> <memory> <functional> <optional> <chrono>
                              <mutex> <sstream>)
  endif()
endfunction()

# plumb_library(NAME DIR [EXCLUDE SUBDIR...])
#
# Builds every .cc under DIR (minus EXCLUDEd sub-folders, which are libraries of their own) into
# a static library. Headers are reached as "DIR/file.h" through a per-library "include shim": a
# directory in the build tree holding one symlink, DIR -> the source folder. A library's shim is
# PUBLIC, so a target sees exactly the folders it links, directly or transitively. The project
# root is never an include directory of a library, which is what makes a wrong-way include fail.
function(plumb_library name dir)
  cmake_parse_arguments(PL "" "" "EXCLUDE" ${ARGN})
  file(GLOB_RECURSE srcs CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/${dir}/*.cc)
  foreach(ex IN LISTS PL_EXCLUDE)
    list(FILTER srcs EXCLUDE REGEX "^${CMAKE_SOURCE_DIR}/${ex}/")
  endforeach()
  if(NOT srcs)
    set(stub ${CMAKE_BINARY_DIR}/stubs/${name}_empty.cc)
    file(WRITE ${stub} "// ${dir} has no sources yet\n")
    set(srcs ${stub})
  endif()
  add_library(${name} STATIC ${srcs})
  plumb_precompile(${name})
  set(shim ${CMAKE_BINARY_DIR}/include-shims/${name})
  get_filename_component(parent ${shim}/${dir} DIRECTORY)
  file(MAKE_DIRECTORY ${parent})
  if(NOT EXISTS ${shim}/${dir})
    file(CREATE_LINK ${CMAKE_SOURCE_DIR}/${dir} ${shim}/${dir} SYMBOLIC)
  endif()
  target_include_directories(${name} PUBLIC ${shim})
endfunction()
