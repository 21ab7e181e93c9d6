#===- TfmAddModel.cmake - Compile a model into a library at build time -===#
#
#   tfm_add_model(<target> MODEL <model.tfm>
#                 [WEIGHTS <weights.safetensors|model.gguf|index.json|dir>]
#                 [NAME <name>] [CPU <cpu>] [TARGET <target>]
#                 [WEIGHTS_MODE embedded|external]
#                 [TOKENIZER <tokenizer.json|directory|model.gguf>]
#                 [OPTIONS <tfm-compile flag>...])
#
# Runs tfm-compile when the project builds (and again whenever the model, the
# weights or the compiler change) and wraps the object it writes in <target>,
# a static library whose users include the generated <name>.h. Every symbol
# of the object is tfm_<name>_..., so models with distinct names link into
# one program; a name used twice in a project (compared upper-cased), or the
# name of a standard C header, is a configure error. <name> defaults to the
# name on the model file's `model` line.
# The object needs only libc and libm: no tfm runtime, no LLVM.
# WEIGHTS_MODE external leaves the weights out of the object, in
# <name>.weights.safetensors next to it (the target's property
# TFM_MODEL_WEIGHTS_FILE), which the app maps and binds at run time with the
# runtime's tfm_weights_open (docs/embedding.md).
# TOKENIZER embeds a tokenizer (tfm-compile --tokenizer): the header then
# declares <name>_tokenize and _detokenize, which call the runtime, so the
# target links tfm::runtime (docs/tokenizers.md).
#
# One implementation serves both the installed package (tfmConfig.cmake
# includes this file) and the tfm source tree (the top-level CMakeLists.txt
# does); both define tfm::tfm-compile.
#
#===----------------------------------------------------------------------===#
include_guard(GLOBAL)

# The name after `model` on the model file's first `model` line, read at
# configure time; the file then becomes a configure dependency, so that a
# renamed model renames its header.
function(_tfm_read_model_name model out)
  file(STRINGS "${model}" lines REGEX "^[ \t]*model[ \t]+[A-Za-z_][A-Za-z0-9_]*")
  list(LENGTH lines count)
  if(count EQUAL 0)
    message(FATAL_ERROR "tfm_add_model: ${model} has no 'model NAME' line; "
                        "pass NAME")
  endif()
  list(GET lines 0 line)
  string(REGEX REPLACE "^[ \t]*model[ \t]+([A-Za-z_][A-Za-z0-9_]*).*" "\\1"
         name "${line}")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${model}")
  set(${out} "${name}" PARENT_SCOPE)
endfunction()

# Refuses a NAME that another tfm_add_model of the project already uses
# (compared upper-cased: the header's guard and macros are TFM_<NAME>_...)
# or that is a standard header's name.
function(_tfm_check_model_name where name)
  # The standard C and POSIX headers an app includes with <...>: a model of
  # such a name would write e.g. stdint.h into a directory on the app's
  # include path, hiding the system header from every file of the app.
  set(reserved
    assert complex ctype errno fenv float inttypes iso646 limits locale math
    setjmp signal stdalign stdarg stdatomic stdbit stdbool stdckdint stddef
    stdint stdio stdlib stdnoreturn string tgmath threads time uchar wchar
    wctype aio arpa cpio dirent dlfcn fcntl fnmatch glob grp iconv langinfo
    libgen malloc memory monetary mqueue netdb nl_types poll pthread pwd regex
    sched search semaphore spawn strings stropts syslog tar termios trace
    ulimit unistd utime utmpx wordexp alloca endian features getopt)
  string(TOLOWER "${name}" lower)
  if(lower IN_LIST reserved)
    message(FATAL_ERROR "${where}: NAME '${name}' would make the header "
                        "${name}.h, which hides the C library's <${lower}.h> "
                        "from every file of the app: pick another NAME")
  endif()
  string(TOUPPER "${name}" upper)
  get_property(taken GLOBAL PROPERTY "_TFM_MODEL_NAME_${upper}")
  if(taken)
    message(FATAL_ERROR "${where}: NAME '${name}' is already the model of "
                        "${taken} (names are compared upper-cased, as the "
                        "header's TFM_<NAME>_ macros are): two models of one "
                        "name cannot be linked together. Give one another "
                        "NAME, or link one target into every app that needs "
                        "the model")
  endif()
  set_property(GLOBAL PROPERTY "_TFM_MODEL_NAME_${upper}" "${where}")
endfunction()

# The files a --weights path compiles from, for the model's DEPENDS: the
# file, the config.json beside a transformers checkpoint (config() reads
# it), and a sharded checkpoint's index and shards (a directory means its
# model.safetensors.index.json, else its model.safetensors, as
# tfm-compile takes it).
function(_tfm_weights_depends where weights out)
  if(IS_DIRECTORY "${weights}")
    if(EXISTS "${weights}/model.safetensors.index.json")
      set(weights "${weights}/model.safetensors.index.json")
    elseif(EXISTS "${weights}/model.safetensors")
      set(weights "${weights}/model.safetensors")
    else()
      message(FATAL_ERROR "${where}: WEIGHTS ${weights} is a directory "
                          "without model.safetensors.index.json or "
                          "model.safetensors")
    endif()
  endif()
  set(files "${weights}")
  cmake_path(GET weights PARENT_PATH dir)
  if(EXISTS "${dir}/config.json")
    list(APPEND files "${dir}/config.json")
  endif()
  if(weights MATCHES "\\.index\\.json$")
    # Read at configure time: a changed index configures again.
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
                 "${weights}")
    file(READ "${weights}" index)
    string(JSON map ERROR_VARIABLE error GET "${index}" weight_map)
    if(error)
      message(FATAL_ERROR "${where}: ${weights}: ${error}")
    endif()
    string(JSON count LENGTH "${map}")
    set(shards "")
    if(count GREATER 0)
      math(EXPR last "${count} - 1")
      foreach(i RANGE ${last})
        string(JSON tensor MEMBER "${map}" ${i})
        string(JSON shard GET "${map}" "${tensor}")
        list(APPEND shards "${shard}")
      endforeach()
    endif()
    list(REMOVE_DUPLICATES shards)
    foreach(shard IN LISTS shards)
      list(APPEND files "${dir}/${shard}")
    endforeach()
  endif()
  set(${out} "${files}" PARENT_SCOPE)
endfunction()

function(tfm_add_model target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "MODEL;WEIGHTS;NAME;CPU;TARGET;WEIGHTS_MODE;TOKENIZER"
                        "OPTIONS")
  set(where "tfm_add_model(${target})")
  if(arg_UNPARSED_ARGUMENTS)
    list(JOIN arg_UNPARSED_ARGUMENTS " " unknown)
    message(FATAL_ERROR "${where}: unknown arguments: ${unknown} (expected "
                        "MODEL, WEIGHTS, NAME, CPU, TARGET, WEIGHTS_MODE, TOKENIZER, "
                        "OPTIONS)")
  endif()
  if(NOT arg_MODEL)
    message(FATAL_ERROR "${where}: MODEL <file.tfm> is required")
  endif()
  if(NOT TARGET tfm::tfm-compile)
    message(FATAL_ERROR "${where}: tfm-compile is not available (tfm was "
                        "built with TFM_BUILD_COMPILER=OFF)")
  endif()

  cmake_path(ABSOLUTE_PATH arg_MODEL BASE_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}"
             NORMALIZE OUTPUT_VARIABLE model)
  if(NOT EXISTS "${model}")
    message(FATAL_ERROR "${where}: MODEL ${model} does not exist")
  endif()
  set(depends "${model}")

  if(arg_NAME)
    set(name "${arg_NAME}")
    if(NOT name MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
      message(FATAL_ERROR "${where}: NAME '${name}' is not a C identifier")
    endif()
  else()
    _tfm_read_model_name("${model}" name)
  endif()
  _tfm_check_model_name("${where}" "${name}")
  # Passed even when it repeats the file's name, so that the symbols always
  # match the header's name.
  set(flags --name "${name}")

  if(arg_WEIGHTS)
    cmake_path(ABSOLUTE_PATH arg_WEIGHTS
               BASE_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}" NORMALIZE
               OUTPUT_VARIABLE weights)
    if(NOT EXISTS "${weights}")
      message(FATAL_ERROR "${where}: WEIGHTS ${weights} does not exist")
    endif()
    list(APPEND flags --weights "${weights}")
    _tfm_weights_depends("${where}" "${weights}" weights_depends)
    list(APPEND depends ${weights_depends})
  endif()
  if(arg_CPU)
    list(APPEND flags --cpu "${arg_CPU}")
  endif()
  if(arg_TOKENIZER)
    cmake_path(ABSOLUTE_PATH arg_TOKENIZER
               BASE_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}" NORMALIZE
               OUTPUT_VARIABLE tokenizer)
    if(IS_DIRECTORY "${tokenizer}")
      set(tokenizer "${tokenizer}/tokenizer.json")
    endif()
    if(NOT EXISTS "${tokenizer}")
      message(FATAL_ERROR "${where}: TOKENIZER ${tokenizer} does not exist")
    endif()
    list(APPEND flags --tokenizer "${tokenizer}")
    list(APPEND depends "${tokenizer}")
  endif()
  set(external OFF)
  if(arg_WEIGHTS_MODE STREQUAL "external")
    set(external ON)
  elseif(arg_WEIGHTS_MODE AND NOT arg_WEIGHTS_MODE STREQUAL "embedded")
    message(FATAL_ERROR "${where}: WEIGHTS_MODE '${arg_WEIGHTS_MODE}' is "
                        "neither embedded nor external")
  endif()
  if(arg_TARGET)
    list(APPEND flags --target "${arg_TARGET}")
  endif()

  # One directory per target, so that its include path holds its header
  # only.
  set(dir "${CMAKE_CURRENT_BINARY_DIR}/tfm-models/${target}")
  set(obj "${dir}/${name}.o")
  set(header "${dir}/${name}.h")
  set(outputs "${obj}" "${header}")
  if(external)
    set(sidecar "${dir}/${name}.weights.safetensors")
    list(APPEND flags --weights-mode external --weights-out "${sidecar}")
    list(APPEND outputs "${sidecar}")
  endif()
  file(MAKE_DIRECTORY "${dir}")
  add_custom_command(
    OUTPUT ${outputs}
    COMMAND tfm::tfm-compile "${model}" -o "${obj}" --header "${header}"
            ${flags} ${arg_OPTIONS}
    DEPENDS ${depends} tfm::tfm-compile
    COMMENT "Compiling the tfm model ${name} (${arg_MODEL})"
    VERBATIM)
  set_source_files_properties("${obj}" PROPERTIES EXTERNAL_OBJECT TRUE
                                                  GENERATED TRUE)

  add_library(${target} STATIC "${obj}" "${header}")
  # Nothing to compile, so CMake cannot pick the archiver's language itself.
  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  if("C" IN_LIST languages)
    set_target_properties(${target} PROPERTIES LINKER_LANGUAGE C)
  else()
    set_target_properties(${target} PROPERTIES LINKER_LANGUAGE CXX)
  endif()
  target_include_directories(${target} INTERFACE "${dir}")
  # Kernels call expf and friends; libc is linked anyway.
  if(UNIX AND NOT APPLE)
    target_link_libraries(${target} INTERFACE m)
  endif()
  set_target_properties(${target} PROPERTIES TFM_MODEL_NAME "${name}"
                                             TFM_MODEL_HEADER "${header}")
  if(external)
    set_target_properties(${target} PROPERTIES TFM_MODEL_WEIGHTS_FILE
                                               "${sidecar}")
  endif()
  if(arg_TOKENIZER)
    target_link_libraries(${target} INTERFACE tfm::runtime)
  endif()
endfunction()
