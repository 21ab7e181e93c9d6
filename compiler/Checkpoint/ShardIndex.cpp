//===- ShardIndex.cpp - A sharded safetensors checkpoint's index ----------===//
#include "compiler/Checkpoint/ShardIndex.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <set>

using namespace mlir::tfm;

bool mlir::tfm::isShardIndexPath(const std::string &path) {
  return llvm::StringRef(path).ends_with(".index.json");
}

std::optional<ShardIndex> mlir::tfm::readShardIndex(const std::string &path,
                                                    std::string &error) {
  // A FIFO or a device would block or never end.
  if (!llvm::sys::fs::is_regular_file(path)) {
    error = path + ": not a regular file";
    return std::nullopt;
  }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer) {
    error = path + ": " + buffer.getError().message();
    return std::nullopt;
  }
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  if (!json) {
    error = path + ": " + llvm::toString(json.takeError());
    return std::nullopt;
  }
  const llvm::json::Object *root = json->getAsObject();
  const llvm::json::Object *map =
      root ? root->getObject("weight_map") : nullptr;
  if (!map) {
    error = path + ": no \"weight_map\" object (a sharded checkpoint's "
                   "index maps each tensor to its shard)";
    return std::nullopt;
  }
  if (map->empty()) {
    error = path + ": \"weight_map\" is empty";
    return std::nullopt;
  }
  std::set<std::string> names;
  for (const auto &[tensor, shard] : *map) {
    std::optional<llvm::StringRef> file = shard.getAsString();
    if (!file) {
      error = path + ": \"weight_map\": the shard of '" + tensor.str() +
              "' is not a string";
      return std::nullopt;
    }
    if (file->empty() || *file == "." || *file == ".." ||
        file->find_first_of("/\\") != llvm::StringRef::npos) {
      error = path + ": \"weight_map\": the shard of '" + tensor.str() +
              "' is '" + file->str() + "', not a file name beside the index";
      return std::nullopt;
    }
    names.insert(file->str());
  }
  ShardIndex index;
  llvm::StringRef directory = llvm::sys::path::parent_path(path);
  std::map<std::string, size_t> position;
  for (const std::string &name : names) {
    llvm::SmallString<256> shardPath(directory);
    llvm::sys::path::append(shardPath, name);
    position[name] = index.shards.size();
    index.shards.push_back(std::string(shardPath));
  }
  for (const auto &[tensor, shard] : *map)
    index.shardOf[tensor.str()] = position[shard.getAsString()->str()];
  return index;
}

std::string mlir::tfm::checkpointInDirectory(const std::string &directory,
                                             std::string &error) {
  for (const char *name :
       {"model.safetensors.index.json", "model.safetensors"}) {
    llvm::SmallString<256> path(directory);
    llvm::sys::path::append(path, name);
    if (llvm::sys::fs::exists(path))
      return std::string(path);
  }
  error = directory +
          ": a directory without model.safetensors.index.json or "
          "model.safetensors (give --weights the checkpoint's file)";
  return "";
}
