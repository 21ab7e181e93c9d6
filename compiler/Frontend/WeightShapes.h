//===- WeightShapes.h - Weight shapes from a checkpoint ---------*- C++ -*-===//
#ifndef TFM_COMPILER_FRONTEND_WEIGHTSHAPES_H
#define TFM_COMPILER_FRONTEND_WEIGHTSHAPES_H

#include "compiler/Frontend/ModelBuilder.h"

namespace mlir::tfm {
class Checkpoint;

/// The shapes and element types of the tensors of an open checkpoint
/// (.safetensors or GGUF), as tfm-bind-weights will bind them.
class CheckpointWeightShapes : public WeightShapes {
public:
  explicit CheckpointWeightShapes(const Checkpoint &file) : file(file) {}
  std::optional<Info> lookup(MLIRContext *ctx, StringRef name) override;
  std::optional<ConfigValue> config(StringRef key) override;
  std::string configSource() const override;
  bool remarksOnDefaults() const override { return remarks; }
  bool remarks = false;

private:
  const Checkpoint &file;
};

} // namespace mlir::tfm

#endif // TFM_COMPILER_FRONTEND_WEIGHTSHAPES_H
