# cmake -DSRC=<source dir> -DOUT=<header> -P CommitId.cmake: writes the commit the source tree is
# at ("<sha>", "<sha>-dirty" with uncommitted changes, "unknown" outside git) to OUT as
# PLUMB_COMMIT. Run on every build; OUT is rewritten only when that changes, so an unchanged tree
# recompiles nothing.
execute_process(COMMAND git -C "${SRC}" rev-parse HEAD OUTPUT_VARIABLE sha
                OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR sha STREQUAL "")
  set(sha "unknown")
else()
  execute_process(COMMAND git -C "${SRC}" status --porcelain --untracked-files=no
                  OUTPUT_VARIABLE changes ERROR_QUIET)
  if(NOT changes STREQUAL "")
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
