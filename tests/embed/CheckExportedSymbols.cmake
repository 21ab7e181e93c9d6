#===- CheckExportedSymbols.cmake - Objects export only tfm_<name>_* ----===#
#
#   cmake -DNM=llvm-nm -DOBJECTS="a.o;b.o" -DNAMES="a;b" -P this-file
#
# Fails, listing the culprits, when an object defines a global symbol outside
# its model's prefix: two such objects could not be linked into one program.
#
#===----------------------------------------------------------------------===#
foreach(var NM OBJECTS NAMES)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "pass -D${var}=...")
  endif()
endforeach()
list(LENGTH OBJECTS count)
list(LENGTH NAMES name_count)
if(NOT count EQUAL name_count)
  message(FATAL_ERROR "OBJECTS and NAMES differ in length")
endif()

set(bad "")
math(EXPR last "${count} - 1")
foreach(i RANGE ${last})
  list(GET OBJECTS ${i} object)
  list(GET NAMES ${i} name)
  execute_process(
    COMMAND "${NM}" --extern-only --defined-only --format=just-symbols
            "${object}"
    OUTPUT_VARIABLE out RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} ${object} failed: ${err}")
  endif()
  string(REPLACE "\n" ";" symbols "${out}")
  list(FILTER symbols EXCLUDE REGEX "^$")
  list(LENGTH symbols defined)
  if(defined EQUAL 0)
    message(FATAL_ERROR "${object} defines no global symbol: not a model?")
  endif()
  set(outside ${symbols})
  list(FILTER outside EXCLUDE REGEX "^tfm_${name}_")
  foreach(symbol IN LISTS outside)
    string(APPEND bad "\n  ${object}: ${symbol}")
  endforeach()
  list(LENGTH outside outside_count)
  message(STATUS "${object}: ${defined} global symbols, ${outside_count} "
                 "outside tfm_${name}_*")
endforeach()
if(bad)
  message(FATAL_ERROR "global symbols outside the model's prefix:${bad}")
endif()
