# Writes ${OUTPUT} with FA_COMPILER_ID: the git commit of the source tree,
# "-dirty" when it has local changes. Run at every build (not only at
# configure time) so the kernel cache never trusts entries built by other
# compiler code. The file is rewritten only when the id changes.
execute_process(
  COMMAND git -C "${SOURCE_DIR}" rev-parse HEAD
  OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE
  RESULT_VARIABLE failed ERROR_QUIET)
if(failed)
  set(commit "unknown")
endif()
execute_process(
  COMMAND git -C "${SOURCE_DIR}" status --porcelain --untracked-files=no
  OUTPUT_VARIABLE changes OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(changes)
  # Local edits: make the id depend on them too.
  execute_process(COMMAND git -C "${SOURCE_DIR}" diff HEAD
    OUTPUT_VARIABLE diff ERROR_QUIET)
  string(SHA256 diffHash "${diff}")
  string(SUBSTRING "${diffHash}" 0 12 diffHash)
  set(commit "${commit}-dirty-${diffHash}")
endif()
set(content "#define FA_COMPILER_ID \"fa-${commit}\"\n")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT "${old}" STREQUAL "${content}")
  file(WRITE "${OUTPUT}" "${content}")
endif()
