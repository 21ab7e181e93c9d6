//===- WeightShapes.cpp - Weight shapes from a checkpoint -----------------===//
#include "compiler/Frontend/WeightShapes.h"
#include "compiler/Checkpoint/Checkpoint.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

std::optional<mlir::tfm::WeightShapes::Info>
mlir::tfm::CheckpointWeightShapes::lookup(MLIRContext *ctx, StringRef name) {
  const CheckpointTensor *tensor = file.find(name);
  if (!tensor)
    return std::nullopt;
  Type type;
  switch (tensor->element) {
  case CheckpointElement::F32:
    type = Float32Type::get(ctx);
    break;
  case CheckpointElement::F64:
    type = Float64Type::get(ctx);
    break;
  case CheckpointElement::I32:
    type = IntegerType::get(ctx, 32);
    break;
  case CheckpointElement::I64:
    type = IntegerType::get(ctx, 64);
    break;
  case CheckpointElement::Unsupported:
    return Info{Type(),
                {},
                "has type " + tensor->dtype + " in " + file.path() +
                    ", which tfm does not support yet (" +
                    file.supportedTypes() + ")"};
  }
  return Info{type,
              SmallVector<int64_t>(tensor->shape.begin(), tensor->shape.end()),
              ""};
}

std::optional<mlir::tfm::WeightShapes::ConfigValue>
mlir::tfm::CheckpointWeightShapes::config(StringRef key) {
  std::string error;
  std::optional<CheckpointConfig> value = file.config(key.str(), error);
  ConfigValue result;
  if (!error.empty()) {
    result.kind = ConfigValue::unsupported;
    result.str = error;
    return result;
  }
  if (!value)
    return std::nullopt;
  switch (value->kind) {
  case CheckpointConfig::Kind::Number:
    result.num = value->number;
    result.isInteger = value->isInteger;
    break;
  case CheckpointConfig::Kind::String:
    result.kind = ConfigValue::string;
    result.str = value->text;
    break;
  case CheckpointConfig::Kind::Bool:
    result.kind = ConfigValue::boolean;
    result.flag = value->flag;
    break;
  case CheckpointConfig::Kind::Other:
    result.kind = ConfigValue::unsupported;
    result.str = "'" + key.str() + "' in " + file.configSource() + " is " +
                 value->text +
                 "; config() reads numbers, strings and "
                 "booleans";
    break;
  }
  return result;
}

std::string mlir::tfm::CheckpointWeightShapes::configSource() const {
  return file.configSource();
}
