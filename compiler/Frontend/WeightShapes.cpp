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
  // Half-precision checkpoints are computed in f32: tfm-bind-weights widens
  // F16 and BF16 data exactly, as PyTorch's load_state_dict into an f32
  // module does.
  if (entry->dtype == "F32" || entry->dtype == "F16" || entry->dtype == "BF16")
    type = Float32Type::get(ctx);
  else if (entry->dtype == "F64")
    type = Float64Type::get(ctx);
  else if (entry->dtype == "I64")
    type = IntegerType::get(ctx, 64);
  else if (entry->dtype == "I32")
    type = IntegerType::get(ctx, 32);
  else
    return std::nullopt;
  return Info{type,
              SmallVector<int64_t>(entry->shape.begin(), entry->shape.end())};
}
