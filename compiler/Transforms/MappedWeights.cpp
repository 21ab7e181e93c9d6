//===- MappedWeights.cpp - Weight blobs over mapped files -----------------===//
#include "compiler/Transforms/MappedWeights.h"
#include "compiler/Checkpoint/Checkpoint.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"

#include <mutex>
#include <vector>

namespace {
std::mutex mutex;
std::vector<std::weak_ptr<mlir::tfm::Checkpoint>> files;
} // namespace

void mlir::tfm::registerMappedWeights(const std::shared_ptr<Checkpoint> &file) {
  std::lock_guard<std::mutex> lock(mutex);
  llvm::erase_if(files, [](const auto &f) { return f.expired(); });
  files.push_back(file);
}

void mlir::tfm::releaseMappedWeightPages(ArrayRef<char> bytes) {
  std::lock_guard<std::mutex> lock(mutex);
  for (const auto &weak : files)
    if (auto file = weak.lock();
        file && file->dropPages(bytes.data(), bytes.size()))
      return;
}
