# install.add-model-depends: tfm_add_model's build step depends on every
# file tfm-compile reads for WEIGHTS: a sharded checkpoint's index, its
# config.json and each shard its weight_map names (a directory as WEIGHTS
# means its index), so that editing any of them compiles the model again.
# Run with -P: SOURCE_DIR, WORK_DIR, TFM_COMPILE.
set(fixture "${SOURCE_DIR}/tests/reference/decoders/gemma3-vlm")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
file(WRITE "${WORK_DIR}/CMakeLists.txt" "
cmake_minimum_required(VERSION 3.25)
project(add_model_depends C)
add_executable(tfm::tfm-compile IMPORTED)
set_target_properties(tfm::tfm-compile PROPERTIES
  IMPORTED_LOCATION \"${TFM_COMPILE}\")
include(\"${SOURCE_DIR}/cmake/TfmAddModel.cmake\")
tfm_add_model(gemma MODEL \"${SOURCE_DIR}/examples/llama/llama.tfm\"
  WEIGHTS \"${fixture}\" NAME gemma)
")
execute_process(
  COMMAND ${CMAKE_COMMAND} -G Ninja -S "${WORK_DIR}" -B "${WORK_DIR}/build"
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "configure failed:\n${out}")
endif()
execute_process(
  COMMAND ninja -C "${WORK_DIR}/build" -t query tfm-models/gemma/gemma.o
  RESULT_VARIABLE status OUTPUT_VARIABLE query ERROR_VARIABLE query)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "ninja -t query failed:\n${query}")
endif()
file(READ "${fixture}/model.safetensors.index.json" index)
string(JSON map GET "${index}" weight_map)
string(JSON count LENGTH "${map}")
set(expected "${fixture}/model.safetensors.index.json"
             "${fixture}/config.json")
math(EXPR last "${count} - 1")
foreach(i RANGE ${last})
  string(JSON tensor MEMBER "${map}" ${i})
  string(JSON shard GET "${map}" "${tensor}")
  list(APPEND expected "${fixture}/${shard}")
endforeach()
list(REMOVE_DUPLICATES expected)
foreach(file IN LISTS expected)
  string(FIND "${query}" "${file}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the model's build step does not depend on "
                        "${file}:\n${query}")
  endif()
endforeach()
list(LENGTH expected n)
execute_process(COMMAND ninja -C "${WORK_DIR}/build"
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "building the model failed:\n${out}")
endif()
message(STATUS "the build step depends on the ${n} files of the sharded "
               "checkpoint and builds")
