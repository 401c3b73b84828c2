# cmake -DSRC=<source dir> -DOUT=<header> -P CommitId.cmake: writes the commit the source tree is
# at ("<sha>", "<sha>-dirty" with uncommitted changes, "unknown" outside git) to OUT as
# PLUMB_COMMIT. Run on every build; OUT is rewritten only when that changes, so an unchanged tree
# recompiles nothing.
execute_process(COMMAND git -C "${SRC}" rev-parse HEAD OUTPUT_VARIABLE sha
                OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
# A source tarball unpacked inside some other work tree is not that tree's commit.
execute_process(COMMAND git -C "${SRC}" rev-parse --show-toplevel OUTPUT_VARIABLE top
                OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
get_filename_component(src_real "${SRC}" REALPATH)
get_filename_component(top_real "${top}" REALPATH)
if(NOT rc EQUAL 0 OR sha STREQUAL "" OR NOT src_real STREQUAL top_real)
  set(sha "unknown")
else()
  execute_process(COMMAND git -C "${SRC}" --no-optional-locks status --porcelain --untracked-files=no
                  OUTPUT_VARIABLE changes ERROR_QUIET RESULT_VARIABLE st)
  if(NOT st EQUAL 0 OR NOT changes STREQUAL "")   # cannot tell: not claimed clean
    set(sha "${sha}-dirty")
  endif()
endif()
set(text "#define PLUMB_COMMIT \"${sha}\"\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT "${old}" STREQUAL "${text}")
  file(WRITE "${OUT}" "${text}")
endif()
