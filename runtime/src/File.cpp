//===- File.cpp - Small POSIX file helpers ----------------------*- C++ -*-===//

#include "File.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tfm::rt {

bool InputFile::open(const std::string &filePath, std::string &error,
                     bool &notFound) {
  path = filePath;
  notFound = false;
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
  // writer, forever, before the regular-file check below could refuse it.
  descriptor = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (descriptor < 0) {
    notFound = errno == ENOENT;
    error = fmt::format("{}: cannot open: {}", path, std::strerror(errno));
    return false;
  }
  struct stat info;
  if (::fstat(descriptor, &info) != 0) {
    error = fmt::format("{}: cannot stat: {}", path, std::strerror(errno));
    return false;
  }
  if (!S_ISREG(info.st_mode)) {
    error = fmt::format("{}: not a regular file", path);
    return false;
  }
  // Regular files ignore O_NONBLOCK; clear it anyway for plain reads.
  int flags = ::fcntl(descriptor, F_GETFL);
  if (flags >= 0)
    ::fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK);
  fileSize = info.st_size;
  return true;
}

InputFile::~InputFile() {
  if (descriptor >= 0)
    ::close(descriptor);
}

bool InputFile::readAt(int64_t offset, void *buffer, int64_t bytes,
                       std::string &error) const {
  auto *out = static_cast<char *>(buffer);
  while (bytes > 0) {
    ssize_t got = ::pread(descriptor, out, static_cast<size_t>(bytes), offset);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0) {
      error = got == 0 ? fmt::format("{}: unexpected end of file", path)
                       : fmt::format("{}: read failed: {}", path,
                                     std::strerror(errno));
      return false;
    }
    out += got;
    offset += got;
    bytes -= got;
  }
  return true;
}

namespace {
bool writeAll(int fd, const void *buffer, size_t bytes) {
  const auto *in = static_cast<const char *>(buffer);
  while (bytes > 0) {
    ssize_t put = ::write(fd, in, bytes);
    if (put < 0 && errno == EINTR)
      continue;
    if (put <= 0)
      return false;
    in += put;
    bytes -= static_cast<size_t>(put);
  }
  return true;
}
} // namespace

bool writeFile(const std::string &path, const std::vector<Chunk> &chunks,
               std::string &error) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    error = fmt::format("{}: cannot create: {}", path, std::strerror(errno));
    return false;
  }
  bool ok = true;
  for (const Chunk &chunk : chunks)
    ok = ok && writeAll(fd, chunk.data, chunk.size);
  int writeErrno = errno;
  // close() can report a delayed write error (e.g. on NFS), so check it too.
  if (::close(fd) != 0 && ok) {
    ok = false;
    writeErrno = errno;
  }
  if (!ok)
    error =
        fmt::format("{}: write failed: {}", path, std::strerror(writeErrno));
  return ok;
}

} // namespace tfm::rt
