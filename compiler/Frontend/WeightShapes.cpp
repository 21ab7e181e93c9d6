//===- WeightShapes.cpp - Weight shapes from a .safetensors file ----------===//
#include "compiler/Frontend/WeightShapes.h"
#include "tfm/safetensors.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

std::optional<mlir::tfm::WeightShapes::Info>
mlir::tfm::SafeTensorsWeightShapes::lookup(MLIRContext *ctx, StringRef name) {
  const ::tfm::SafeTensorEntry *entry = file.find(name.str());
  if (!entry)
    return std::nullopt;
  Type type;
  if (entry->dtype == "F32")
    type = Float32Type::get(ctx);
  else if (entry->dtype == "F64")
    type = Float64Type::get(ctx);
  else if (entry->dtype == "I64")
    type = IntegerType::get(ctx, 64);
  else if (entry->dtype == "I32")
    type = IntegerType::get(ctx, 32);
  else
    return std::nullopt;
  return Info{type, SmallVector<int64_t>(entry->shape.begin(), entry->shape.end())};
}
