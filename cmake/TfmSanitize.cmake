# TFM_SANITIZE: which targets AddressSanitizer and UBSan instrument.
#
# The runtime, the frontend and the dialect (what reads untrusted input), and
# the test programs that drive them are instrumented. The compiler's passes
# are not: their objects are then the same as in an ordinary build, so a
# sanitizer build tree gets them from ccache instead of compiling the whole
# compiler a second time (CI time, README.md "Tests"). Generated model code
# is never instrumented; the runtime it is linked against and run from is.
# -O1, as the sanitizers' documentation recommends: instrumented TUs (the
# large Catch2 test files above all) compile several times faster than at
# -O3, and what they run is not the heavy work (the compiler's passes and the
# generated code stay -O3).
set(TFM_SANITIZER_COMPILE_FLAGS -O1 -fsanitize=address,undefined
    -fno-sanitize-recover=all -fno-omit-frame-pointer)
set(tfm_sanitized tfm_runtime tfm_catch_main tfm-runtime-tests
    tfm-runtime-fixtures tfm-run)
if(TFM_BUILD_COMPILER)
  list(APPEND tfm_sanitized TfmDialect TfmFrontend tfm-frontend-tests
       tfm-e2e-tests)
endif()
foreach(target ${tfm_sanitized})
  if(TARGET ${target})
    target_compile_options(${target} PRIVATE ${TFM_SANITIZER_COMPILE_FLAGS})
  endif()
endforeach()
# Not AddressSanitizer in the file that defines the dialect's attribute
# storage: its storage is allocated with the context's BumpPtrAllocator
# through code inlined here, which, built with ASan, poisons the rest of each
# new slab, while libMLIR (not instrumented) allocates its own objects from
# that slab without unpoisoning them: a false use-after-poison in StringAttr.
if(TARGET TfmDialect)
  set_source_files_properties(
    ${PROJECT_SOURCE_DIR}/dialects/Tfm/IR/TfmAttrs.cpp
    TARGET_DIRECTORY TfmDialect
    PROPERTIES COMPILE_OPTIONS -fno-sanitize=address)
endif()

# The sanitizers' run-time defaults for the test programs (see the file).
foreach(test tfm-runtime-tests tfm-runtime-fixtures tfm-frontend-tests
    tfm-e2e-tests)
  if(TARGET ${test})
    target_sources(${test} PRIVATE ${PROJECT_SOURCE_DIR}/tests/SanitizerOptions.cpp)
  endif()
endforeach()
