//===- MemoryFile.h - Fuzz inputs as files that never touch the disk -*- C++
//-*-===//
//
// The readers under test take paths. A memfd gives each input a path
// (/proc/self/fd/N) that is a regular file, as the readers require, without
// a write to disk per run.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_TESTS_FUZZ_MEMORYFILE_H
#define TFM_TESTS_FUZZ_MEMORYFILE_H

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace tfmfuzz {

/// A file in memory holding some bytes; it is closed on destruction.
class MemoryFile {
public:
  MemoryFile(const uint8_t *data, size_t size) {
    fd = memfd_create("tfm-fuzz", MFD_CLOEXEC);
    if (fd < 0)
      die("memfd_create");
    size_t done = 0;
    while (done < size) {
      ssize_t n = ::write(fd, data + done, size - done);
      if (n <= 0)
        die("write");
      done += static_cast<size_t>(n);
    }
  }
  /// An empty file for a writer to fill in.
  MemoryFile() : MemoryFile(nullptr, 0) {}
  ~MemoryFile() { ::close(fd); }
  MemoryFile(const MemoryFile &) = delete;
  MemoryFile &operator=(const MemoryFile &) = delete;

  std::string path() const { return "/proc/self/fd/" + std::to_string(fd); }

private:
  [[noreturn]] static void die(const char *what) {
    std::perror(what);
    std::abort();
  }
  int fd = -1;
};

/// Stops the run with a message: a property of an accepted input failed.
[[noreturn]] inline void propertyFailed(const char *what) {
  std::fprintf(stderr, "property violated: %s\n", what);
  std::abort();
}

#define TFM_FUZZ_CHECK(condition)                                              \
  do {                                                                         \
    if (!(condition))                                                          \
      ::tfmfuzz::propertyFailed(#condition);                                   \
  } while (false)

} // namespace tfmfuzz

#endif // TFM_TESTS_FUZZ_MEMORYFILE_H
