//===- ShardIndex.h - A sharded safetensors checkpoint's index --*- C++ -*-===//
//
// transformers' save_pretrained splits a checkpoint above its shard size
// (5 GB) into model-0000N-of-0000M.safetensors and writes
// model.safetensors.index.json, whose "weight_map" names each tensor's
// shard. Most Llama-family checkpoints of 3B parameters and more, and every
// Gemma 3 from 4B, come so.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMPILER_CHECKPOINT_SHARDINDEX_H
#define TFM_COMPILER_CHECKPOINT_SHARDINDEX_H

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir::tfm {

struct ShardIndex {
  /// The shards' paths, beside the index, sorted.
  std::vector<std::string> shards;
  /// Each tensor's shard: an index into `shards`.
  std::map<std::string, size_t, std::less<>> shardOf;
};

/// Whether `path` names a shard index (it ends in ".index.json").
bool isShardIndexPath(const std::string &path);

/// Reads the index at `path`. A shard must be a plain file name in the
/// index's directory (no path separators, not "." or ".."). On failure
/// returns nullopt with `error` naming the file and the entry.
std::optional<ShardIndex> readShardIndex(const std::string &path,
                                         std::string &error);

/// The checkpoint file a directory holds, as transformers writes one:
/// model.safetensors.index.json, else model.safetensors. Empty with `error`
/// set when it holds neither.
std::string checkpointInDirectory(const std::string &directory,
                                  std::string &error);

} // namespace mlir::tfm

#endif // TFM_COMPILER_CHECKPOINT_SHARDINDEX_H
