#===- InstallAndBuildExample.cmake - The installed package, end to end -===#
#
#   cmake -DBUILD_DIR=... -DEXAMPLE_DIR=... -DWORK_DIR=... -DGENERATOR=...
#         -DCOMPILER=... -DREADELF=... -DAPP=... -DEXPECT=... -P this-file
#
# COMPILER is the example's compiler (CMAKE_C_COMPILER for a C project,
# CMAKE_CXX_COMPILER otherwise), APP its executable, EXPECT the regular
# expressions its output must match, separated by @@.
#
# 1. cmake --install BUILD_DIR into WORK_DIR/prefix (removed first);
# 2. configures EXAMPLE_DIR against that prefix alone (no package registry,
#    so a tfm found elsewhere cannot stand in for it), builds and runs it;
# 3. fails if the app's link line or its dynamic dependencies name MLIR or
#    LLVM: an app that embeds a model needs neither.
#
#===----------------------------------------------------------------------===#
foreach(var BUILD_DIR EXAMPLE_DIR WORK_DIR GENERATOR COMPILER READELF APP
        EXPECT)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "pass -D${var}=...")
  endif()
endforeach()

function(run step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${step} failed (${rc}):\n${out}")
  endif()
  set(output "${out}" PARENT_SCOPE)
endfunction()

set(prefix "${WORK_DIR}/prefix")
set(app_build "${WORK_DIR}/build")
file(REMOVE_RECURSE "${WORK_DIR}")

run("install" "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}")
foreach(file bin/tfm-compile bin/tfm-run lib/libtfm_runtime.a
        include/tfm/runtime.h include/tfm/safetensors.h
        lib/cmake/tfm/tfmConfig.cmake lib/cmake/tfm/tfmConfigVersion.cmake
        lib/cmake/tfm/tfmTargets.cmake lib/cmake/tfm/TfmAddModel.cmake)
  if(NOT EXISTS "${prefix}/${file}")
    message(FATAL_ERROR "the install has no ${file}")
  endif()
endforeach()

run("configure the example" "${CMAKE_COMMAND}" -G "${GENERATOR}"
    -S "${EXAMPLE_DIR}" -B "${app_build}" -DCMAKE_BUILD_TYPE=Release
    "-DCMAKE_C_COMPILER=${COMPILER}" "-DCMAKE_CXX_COMPILER=${COMPILER}"
    "-DCMAKE_PREFIX_PATH=${prefix}"
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
file(STRINGS "${app_build}/CMakeCache.txt" found REGEX "^tfm_DIR:")
if(NOT found STREQUAL "tfm_DIR:PATH=${prefix}/lib/cmake/tfm")
  message(FATAL_ERROR "the example found another tfm: ${found}")
endif()

run("build the example" "${CMAKE_COMMAND}" --build "${app_build}"
    --parallel 2)
# Ninja's rules, or Makefiles' link.txt and build.make, depending on GENERATOR.
file(GLOB_RECURSE rule_files "${app_build}/build.ninja" "${app_build}/*.txt"
     "${app_build}/*.make")
set(compile_lines "")
set(link_lines "")
foreach(file IN LISTS rule_files)
  file(STRINGS "${file}" lines REGEX "tfm-compile")
  list(APPEND compile_lines ${lines})
  if(file MATCHES "build.ninja$")
    file(STRINGS "${file}" lines REGEX "^  LINK_(LIBRARIES|FLAGS|PATH) =")
  elseif(file MATCHES "link.txt$")
    file(STRINGS "${file}" lines)
  else()
    set(lines "")
  endif()
  list(APPEND link_lines ${lines})
endforeach()
string(FIND "${compile_lines}" "${prefix}/bin/tfm-compile" at)
if(at EQUAL -1)
  message(FATAL_ERROR "the model was not compiled by the installed "
                      "tfm-compile:\n${compile_lines}")
endif()
if(NOT link_lines)
  message(FATAL_ERROR "found no link line in ${app_build}")
endif()
foreach(line IN LISTS link_lines)
  if(line MATCHES "(libMLIR|libLLVM|-lMLIR|-lLLVM|/llvm-[0-9]+/lib)")
    message(FATAL_ERROR "the app's link line names MLIR/LLVM "
                        "(${CMAKE_MATCH_1}):\n${line}")
  endif()
endforeach()

set(app "${app_build}/${APP}")
run("run the example" "${app}")
message(STATUS "${APP} says:\n${output}")
string(REPLACE "@@" ";" patterns "${EXPECT}")
foreach(pattern IN LISTS patterns)
  if(NOT output MATCHES "${pattern}")
    message(FATAL_ERROR "${APP}'s output does not match '${pattern}'")
  endif()
endforeach()

run("readelf" "${READELF}" -d "${app}")
string(REGEX MATCHALL "\\(NEEDED\\)[^\n]*" needed "${output}")
message(STATUS "${APP} needs:\n${needed}")
if(needed MATCHES "MLIR|LLVM")
  message(FATAL_ERROR "${APP} depends on MLIR/LLVM:\n${needed}")
endif()
# The runtime uses fmt header-only: an app needs no libfmt at run time.
if(needed MATCHES "libfmt")
  message(FATAL_ERROR "${APP} depends on libfmt:\n${needed}")
endif()
