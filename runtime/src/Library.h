//===- Library.h - A dlopen'ed shared library -------------------*- C++ -*-===//

#ifndef TFM_RUNTIME_LIBRARY_H
#define TFM_RUNTIME_LIBRARY_H

#include <memory>
#include <string>

namespace tfm::rt {

/// A shared library that stays loaded while this object lives.
class Library {
public:
  /// Loads `path`; on failure returns null with `error` set ("PATH: ...").
  static std::unique_ptr<Library> open(const std::string &path,
                                       std::string &error);
  ~Library();
  Library(const Library &) = delete;
  Library &operator=(const Library &) = delete;

  /// The address of `name`, or null.
  void *symbol(const char *name) const;

private:
  explicit Library(void *handle) : handle(handle) {}
  void *handle;
};

} // namespace tfm::rt

#endif // TFM_RUNTIME_LIBRARY_H
