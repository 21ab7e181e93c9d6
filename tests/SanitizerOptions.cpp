//===- SanitizerOptions.cpp - Defaults of the sanitizer test builds -------===//
//
// Linked into the test programs of a TFM_SANITIZE build
// (cmake/TfmSanitize.cmake), so that ctest and a run by hand behave alike.
// Tests ask for impossible amounts of memory on purpose (a 4 TB scratch
// buffer must come back as an out-of-memory status), which ASan would
// otherwise report as a fatal error instead of returning NULL.
//
//===----------------------------------------------------------------------===//

extern "C" const char *__asan_default_options() {
  return "allocator_may_return_null=1";
}

extern "C" const char *__ubsan_default_options() {
  return "print_stacktrace=1";
}
