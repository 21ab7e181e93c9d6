//===- File.h - Small POSIX file helpers ------------------------*- C++ -*-===//

#ifndef TFM_RUNTIME_FILE_H
#define TFM_RUNTIME_FILE_H

#include <cstdint>
#include <string>
#include <vector>

namespace tfm::rt {

/// An open, read-only file descriptor that closes itself.
class InputFile {
public:
  /// Opens `path`, which must be a regular file. On failure returns false and
  /// sets `error` to "PATH: ..." and `notFound` when it does not exist.
  bool open(const std::string &path, std::string &error, bool &notFound);
  ~InputFile();

  int fd() const { return descriptor; }
  int64_t size() const { return fileSize; }

  /// Reads exactly `bytes` at `offset`; on failure sets `error` (with PATH).
  bool readAt(int64_t offset, void *buffer, int64_t bytes,
              std::string &error) const;

private:
  std::string path;
  int descriptor = -1;
  int64_t fileSize = 0;
};

/// A piece of a file to write.
struct Chunk {
  const void *data;
  size_t size;
};

/// Writes `chunks` one after the other to `path`, replacing it; on failure
/// sets `error` to "PATH: ...".
bool writeFile(const std::string &path, const std::vector<Chunk> &chunks,
               std::string &error);

} // namespace tfm::rt

#endif // TFM_RUNTIME_FILE_H
