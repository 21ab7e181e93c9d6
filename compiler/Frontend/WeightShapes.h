//===- WeightShapes.h - Weight shapes from a .safetensors file --*- C++ -*-===//
#ifndef TFM_COMPILER_FRONTEND_WEIGHTSHAPES_H
#define TFM_COMPILER_FRONTEND_WEIGHTSHAPES_H

#include "compiler/Frontend/ModelBuilder.h"

namespace tfm {
class SafeTensorsFile;
} // namespace tfm

namespace mlir::tfm {

/// The shapes of the tensors of an open .safetensors file.
class SafeTensorsWeightShapes : public WeightShapes {
public:
  explicit SafeTensorsWeightShapes(const ::tfm::SafeTensorsFile &file)
      : file(file) {}
  std::optional<Info> lookup(MLIRContext *ctx, StringRef name) override;

private:
  const ::tfm::SafeTensorsFile &file;
};

} // namespace mlir::tfm

#endif // TFM_COMPILER_FRONTEND_WEIGHTSHAPES_H
