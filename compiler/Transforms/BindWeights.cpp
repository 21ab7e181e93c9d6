//===- BindWeights.cpp - tfm.weight to constants from .safetensors --------===//
#include "compiler/Transforms/Passes.h"
#include "dialects/Tfm/IR/TfmOps.h"
#include "tfm/safetensors.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMBINDWEIGHTS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {
/// The safetensors dtype that stores elements of `type`, or "" if none does.
StringRef safetensorsDtypeFor(Type type) {
  if (type.isF32())
    return "F32";
  if (type.isF64())
    return "F64";
  if (type.isInteger(64))
    return "I64";
  if (type.isInteger(32))
    return "I32";
  return "";
}

std::string formatShape(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? ", " : "") + std::to_string(d);
  return s + "]";
}

struct TfmBindWeightsPass : mlir::tfm::impl::TfmBindWeightsBase<TfmBindWeightsPass> {
  using TfmBindWeightsBase::TfmBindWeightsBase;

  void runOnOperation() override {
    SmallVector<WeightOp> weights;
    getOperation().walk([&](WeightOp op) { weights.push_back(op); });
    if (weights.empty())
      return;
    if (weightsPath.empty()) {
      weights.front().emitOpError("needs a weights file (--weights) to bind '")
          << weights.front().getName() << "'";
      return signalPassFailure();
    }
    std::string error;
    std::unique_ptr<::tfm::SafeTensorsFile> file =
        ::tfm::SafeTensorsFile::open(weightsPath, error);
    if (!file) {
      getOperation().emitError(error);
      return signalPassFailure();
    }
    bool failedAny = false;
    for (WeightOp op : weights)
      failedAny |= failed(bind(op, *file));
    if (failedAny)
      signalPassFailure();
  }

  LogicalResult bind(WeightOp op, const ::tfm::SafeTensorsFile &file) {
    const ::tfm::SafeTensorEntry *entry = file.find(op.getName().str());
    if (!entry)
      return op.emitOpError("weight '")
             << op.getName() << "' is not in " << weightsPath;
    auto type = cast<RankedTensorType>(op.getType());
    if (!llvm::is_contained({"F32", "F64", "I32", "I64"}, entry->dtype))
      return op.emitOpError("weight '")
             << op.getName() << "' has dtype " << entry->dtype << " in "
             << weightsPath << ", which tfm does not support yet (F32, F64, "
             << "I32, I64)";
    StringRef dtype = safetensorsDtypeFor(type.getElementType());
    if (entry->dtype != dtype)
      return op.emitOpError("weight '")
             << op.getName() << "' is " << entry->dtype << " in " << weightsPath
             << " but the model expects " << type.getElementType();
    if (ArrayRef<int64_t>(entry->shape) != type.getShape())
      return op.emitOpError("weight '")
             << op.getName() << "' is " << formatShape(entry->shape) << " in "
             << weightsPath << " but the model expects "
             << formatShape(type.getShape());
    auto data = DenseElementsAttr::getFromRawBuffer(
        type, ArrayRef<char>(static_cast<const char *>(entry->data),
                             entry->byteSize));
    OpBuilder builder(op);
    Value constant = arith::ConstantOp::create(builder, op.getLoc(), data);
    op.replaceAllUsesWith(constant);
    op.erase();
    return success();
  }
};
} // namespace
