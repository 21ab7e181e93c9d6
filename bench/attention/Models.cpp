//===- Models.cpp - The attention model, compiled in-process -------------===//
#include "Models.h"

#include "compiler/Driver/Driver.h"

#include <chrono>
#include <cstdio>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace bench {

namespace {
/// Sets options.fuseAttention when CompileOptions has it (it is being added
/// alongside this benchmark); false when it does not.
template <typename T>
auto setFuseAttention(T &options, bool fuse, int)
    -> decltype(options.fuseAttention = fuse, bool()) {
  options.fuseAttention = fuse;
  return true;
}
template <typename T> bool setFuseAttention(T &, bool, long) { return false; }

std::string readFile(const std::string &path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// The first line that says "error", else the first line.
std::string firstError(const std::string &diagnostics) {
  std::istringstream lines(diagnostics);
  std::string line, first;
  while (std::getline(lines, line)) {
    if (first.empty())
      first = line;
    if (line.find("error") != std::string::npos)
      return line;
  }
  return first.empty() ? "compilation failed" : first;
}
} // namespace

std::string attentionSource(const Shape &shape, bool causal, bool dynamicSeq) {
  std::string seq = dynamicSeq ? "seq" : std::to_string(shape.s);
  std::string dims = std::to_string(shape.b) + ", " + std::to_string(shape.h) +
                     ", " + seq + ", " + std::to_string(shape.d);
  std::string scores =
      "q @ transpose(k) / sqrt(" + std::to_string(shape.d) + ")";
  if (causal)
    scores = "causal_mask(" + scores + ")";
  return "model attn\n"
         "input q: f32[" +
         dims +
         "]\n"
         "input k: f32[" +
         dims +
         "]\n"
         "input v: f32[" +
         dims +
         "]\n"
         "y = softmax(" +
         scores +
         ") @ v\n"
         "output y\n";
}

bool canChooseFusion() {
  mlir::tfm::CompileOptions options;
  return setFuseAttention(options, true, 0);
}

CompiledModel compileAttention(const std::string &dir, const Shape &shape,
                               bool causal, bool fuse, bool dynamicSeq) {
  CompiledModel result;
  std::string stem = dir + "/attn_" + std::to_string(shape.b) + "x" +
                     std::to_string(shape.h) + "x" + std::to_string(shape.s) +
                     "x" + std::to_string(shape.d) + (causal ? "_causal" : "") +
                     (fuse ? "_fused" : "_unfused");
  std::string modelPath = stem + ".tfm";
  {
    std::ofstream out(modelPath);
    out << attentionSource(shape, causal, dynamicSeq);
    if (!out) {
      result.error = "cannot write " + modelPath;
      return result;
    }
  }

  mlir::tfm::CompileOptions options;
  options.modelPath = modelPath;
  options.outputPath = stem + ".so";
  options.cpu = "host";
  if (!setFuseAttention(options, fuse, 0) && !fuse) {
    result.error = "CompileOptions::fuseAttention is missing in this build";
    return result;
  }

  // compileModel reports through llvm::errs() (descriptor 2), and the linker
  // it runs inherits the descriptor: capture both in a file.
  std::string logPath = stem + ".log";
  std::fflush(stderr);
  int saved = ::dup(2);
  int fd = ::open(logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (saved >= 0 && fd >= 0) {
    ::dup2(fd, 2);
    ::close(fd);
  }
  auto start = std::chrono::steady_clock::now();
  bool ok = mlir::succeeded(mlir::tfm::compileModel(options));
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::fflush(stderr);
  if (saved >= 0) {
    ::dup2(saved, 2);
    ::close(saved);
  }
  result.ok = ok;
  if (ok)
    result.libraryPath = options.outputPath;
  else
    result.error = firstError(readFile(logPath));
  return result;
}

} // namespace bench
