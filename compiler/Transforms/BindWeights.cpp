//===- BindWeights.cpp - tfm.weight to constants from a checkpoint --------===//
#include "compiler/Checkpoint/Checkpoint.h"
#include "compiler/Transforms/MappedWeights.h"
#include "compiler/Transforms/Passes.h"
#include "dialects/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <vector>

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMBINDWEIGHTS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {
/// Weights from this size on are bound as resource blobs instead of
/// DenseElementsAttrs: stored ones over the mapped file (no copy in the
/// context), converted ones (widened, dequantized) owning their f32 values.
/// Smaller ones stay dense, readable in IR dumps and foldable.
constexpr size_t kResourceBytes = 4096;

/// The element type a model computes `element` in, or null.
Type typeOf(MLIRContext *ctx, CheckpointElement element) {
  switch (element) {
  case CheckpointElement::F32:
    return Float32Type::get(ctx);
  case CheckpointElement::F64:
    return Float64Type::get(ctx);
  case CheckpointElement::I32:
    return IntegerType::get(ctx, 32);
  case CheckpointElement::I64:
    return IntegerType::get(ctx, 64);
  case CheckpointElement::Unsupported:
    return Type();
  }
  return Type();
}

std::string formatShape(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? ", " : "") + std::to_string(d);
  return s + "]";
}

struct TfmBindWeightsPass
    : mlir::tfm::impl::TfmBindWeightsBase<TfmBindWeightsPass> {
  using TfmBindWeightsBase::TfmBindWeightsBase;

  void runOnOperation() override {
    SmallVector<WeightOp> weights;
    getOperation().walk([&](WeightOp op) { weights.push_back(op); });
    if (weights.empty())
      return;
    if (weightsPath.empty()) {
      emitError(weights.front().getLoc())
          << "weight '" << weights.front().getName()
          << "' needs a weights file (--weights)";
      return signalPassFailure();
    }
    std::string error;
    // Shared with the blobs that point into its mapping, which keep it
    // mapped as long as the context holds them.
    std::shared_ptr<Checkpoint> file = Checkpoint::open(weightsPath, error);
    if (!file) {
      getOperation().emitError(error);
      return signalPassFailure();
    }
    registerMappedWeights(file);
    bool failedAny = false;
    for (WeightOp op : weights)
      failedAny |= failed(bind(op, file));
    if (failedAny)
      signalPassFailure();
  }

  LogicalResult bind(WeightOp op, const std::shared_ptr<Checkpoint> &file) {
    const CheckpointTensor *tensor = file->find(op.getName());
    if (!tensor)
      return emitError(op.getLoc())
             << "weight '" << op.getName() << "' is not in " << weightsPath;
    auto type = cast<RankedTensorType>(op.getType());
    Type stored = typeOf(type.getContext(), tensor->element);
    if (!stored)
      return emitError(op.getLoc())
             << "weight '" << op.getName() << "' has dtype " << tensor->dtype
             << " in " << weightsPath << ", which tfm does not support yet ("
             << file->supportedTypes() << ")";
    if (stored != type.getElementType())
      return emitError(op.getLoc())
             << "weight '" << op.getName() << "' is " << tensor->dtype << " in "
             << weightsPath << " but the model expects "
             << type.getElementType();
    if (ArrayRef<int64_t>(tensor->shape) != type.getShape())
      return emitError(op.getLoc())
             << "weight '" << op.getName() << "' is "
             << formatShape(tensor->shape) << " in " << weightsPath
             << " but the model expects " << formatShape(type.getShape());
    ElementsAttr data;
    int64_t count = tensor->elementCount();
    if (tensor->converts) {
      auto values = std::make_shared<std::vector<float>>(size_t(count));
      file->toF32(*tensor, values->data());
      ArrayRef<char> bytes(reinterpret_cast<const char *>(values->data()),
                           values->size() * sizeof(float));
      if (bytes.size() >= kResourceBytes)
        data = DenseResourceElementsAttr::get(
            type, op.getName(),
            AsmResourceBlob(
                bytes, alignof(float), [values](void *, size_t, size_t) {},
                false));
      else
        data = DenseElementsAttr::get(type, ArrayRef<float>(*values));
    } else {
      size_t elementBytes = type.getElementTypeBitWidth() / 8;
      bool aligned =
          reinterpret_cast<uintptr_t>(tensor->data) % elementBytes == 0;
      ArrayRef<char> bytes(static_cast<const char *>(tensor->data),
                           tensor->byteSize);
      if (bytes.size() >= kResourceBytes && aligned)
        data = DenseResourceElementsAttr::get(
            type, op.getName(),
            AsmResourceBlob(
                bytes, elementBytes, [file](void *, size_t, size_t) {}, false));
      else
        data = DenseElementsAttr::getFromRawBuffer(type, bytes);
    }
    OpBuilder builder(op);
    // The name travels with the constant to its global, where external
    // weights take it as the tensor's name in the sidecar file.
    Location loc = NameLoc::get(op.getNameAttr(), op.getLoc());
    auto constant = arith::ConstantOp::create(builder, loc, type, data);
    // A GGUF matrix of blocks that tfm-pack-linear keeps (Q8_0, Q4_0, Q4_1,
    // Q5_0, Q5_1, Q4_K, Q5_K, Q6_K) keeps them beside its f32 values
    // (`tfm.<type>_blocks`): tfm-pack-linear packs a linear layer's weight
    // from them (the blocks over the mapped file, not copied), and drops
    // them.
    if (file->isGguf() &&
        llvm::is_contained(
            {"Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q4_K", "Q5_K", "Q6_K"},
            StringRef(tensor->dtype)) &&
        type.getRank() == 2) {
      auto bytesType = RankedTensorType::get(
          {int64_t(tensor->byteSize)}, IntegerType::get(type.getContext(), 8));
      ArrayRef<char> bytes(static_cast<const char *>(tensor->data),
                           tensor->byteSize);
      ElementsAttr blocks =
          bytes.size() >= kResourceBytes
              ? ElementsAttr(DenseResourceElementsAttr::get(
                    bytesType, (op.getName() + "." + tensor->dtype).str(),
                    AsmResourceBlob(
                        bytes, 1, [file](void *, size_t, size_t) {}, false)))
              : ElementsAttr(
                    DenseElementsAttr::getFromRawBuffer(bytesType, bytes));
      constant->setAttr("tfm." + StringRef(tensor->dtype).lower() + "_blocks",
                        blocks);
    }
    op.replaceAllUsesWith(constant.getResult());
    op.erase();
    return success();
  }
};
} // namespace
