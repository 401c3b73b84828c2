# plumb_precompile(TARGET [OWN]): the headers nearly every file includes (nlohmann/json.hpp alone
# costs ~5 s per file on the 2-core CI machine) compiled once per target. PLUMB_PCH=OFF
# turns it off. `make check-includes` keeps it (the std and third-party headers every build
# gets) and turns unity off: it checks the project's own includes, not those of the PCH.
option(PLUMB_PCH "Precompile the common headers" ON)
# Targets built with the same flags share one PCH (the first one's): the libraries and the
# binary. The unit tests (-O0 -g1) have their own: GCC rejects a PCH made with other -O/-g.
function(plumb_precompile target)
  if(NOT PLUMB_PCH)
    return()
  endif()
  cmake_parse_arguments(PP "OWN" "" "" ${ARGN})
  get_property(owner GLOBAL PROPERTY PLUMB_PCH_OWNER)
  if(owner AND NOT PP_OWN)
    target_precompile_headers(${target} REUSE_FROM ${owner})
    return()
  endif()
  target_precompile_headers(${target} PRIVATE <nlohmann/json.hpp> <fmt/format.h> <string>
                            <vector> <map> <set> <memory> <functional> <optional> <chrono>
                            <mutex> <sstream>)
  if(NOT owner)
    set_property(GLOBAL PROPERTY PLUMB_PCH_OWNER ${target})
  endif()
endfunction()

# plumb_unity(TARGET): the target's files compiled in batches of PLUMB_UNITY_BATCH, one
# translation unit each (CMake's unity build). What a file costs is mostly the code GCC emits
# for the inline templates it uses (nlohmann::json, fmt, CLI11, std), again in every file: five
# cmd/ files took 76 s one by one and 23 s as one batch (-O2 -g, 2-core machine). So every
# name a .cc file defines at namespace scope, even in an anonymous namespace, must be unique
# in its folder: shared helpers live in one place (parse_util, report_util, ...), the rest are
# named for their file. PLUMB_UNITY=OFF compiles file by file (to check that each file
# includes what it uses); the batches are what CI builds.
option(PLUMB_UNITY "Compile each target's files in batches (unity build)" ON)
set(PLUMB_UNITY_BATCH 12 CACHE STRING "Files per unity batch")
function(plumb_unity target)
  if(PLUMB_UNITY)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON
                          UNITY_BUILD_BATCH_SIZE ${PLUMB_UNITY_BATCH})
    # GCC takes a .cc file that a batch includes for a header, and warns when a class there
    # has a member of an anonymous-namespace type; in a unity batch that is by design. (Clang,
    # which builds the ASan tree, has no such warning, and would warn about the flag.)
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      target_compile_options(${target} PRIVATE -Wno-subobject-linkage)
    endif()
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
  plumb_unity(${name})
  set(shim ${CMAKE_BINARY_DIR}/include-shims/${name})
  get_filename_component(parent ${shim}/${dir} DIRECTORY)
  file(MAKE_DIRECTORY ${parent})
  if(NOT EXISTS ${shim}/${dir})
    file(CREATE_LINK ${CMAKE_SOURCE_DIR}/${dir} ${shim}/${dir} SYMBOLIC)
  endif()
  target_include_directories(${name} PUBLIC ${shim})
endfunction()
