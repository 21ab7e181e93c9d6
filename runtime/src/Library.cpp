//===- Library.cpp - A dlopen'ed shared library -----------------*- C++ -*-===//

#include "Library.h"

#include <fmt/format.h>

#include <dlfcn.h>

namespace tfm::rt {

std::unique_ptr<Library> Library::open(const std::string &path,
                                       std::string &error) {
  // Without a slash dlopen searches the library path instead of the current
  // directory, which is never what a user who names a file means.
  std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  // RTLD_LOCAL: two artifacts may export the same tfm_artifact_metadata.
  void *handle = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *message = ::dlerror();
    std::string reason = message ? message : "unknown error";
    // glibc starts the message with the file name, which `error` has already.
    if (reason.rfind(file + ": ", 0) == 0)
      reason.erase(0, file.size() + 2);
    error = fmt::format("{}: cannot load the shared library: {}", path, reason);
    return nullptr;
  }
  return std::unique_ptr<Library>(new Library(handle));
}

Library::~Library() { ::dlclose(handle); }

void *Library::symbol(const char *name) const { return ::dlsym(handle, name); }

} // namespace tfm::rt
