//===- BindWeights.cpp - tfm.weight to constants from .safetensors --------===//
#include "compiler/Transforms/MappedWeights.h"
#include "compiler/Transforms/Passes.h"
#include "dialects/Tfm/IR/TfmOps.h"
#include "tfm/safetensors.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>
#include <vector>

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMBINDWEIGHTS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {
/// Weights from this size on are bound as resource blobs instead of
/// DenseElementsAttrs: f32 ones over the mapped file (no copy in the
/// context), widened ones owning their f32 values. Smaller ones stay dense,
/// readable in IR dumps and foldable.
constexpr size_t kResourceBytes = 4096;

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

/// IEEE binary16 to binary32, exact (subnormals, infinities and NaN payloads
/// included); bit manipulation rather than APFloat, which costs ~50x more per
/// element on a checkpoint of 10^8 weights.
float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000 | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {
    // Subnormal: normalize, one exponent step per shift.
    int shift = 0;
    while (!(mantissa & 0x400)) {
      mantissa <<= 1;
      ++shift;
    }
    bits = sign | (uint32_t(127 - 15 + 1 - shift) << 23) |
           ((mantissa & 0x3ff) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

/// bfloat16 is the upper half of a binary32.
float bfloat16ToFloat(uint16_t b) {
  uint32_t bits = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

/// The f32 values of an F16 or BF16 tensor's little-endian data.
std::vector<float> widenToF32(const ::tfm::SafeTensorEntry &entry) {
  auto *bytes = static_cast<const unsigned char *>(entry.data);
  size_t count = entry.byteSize / 2;
  std::vector<float> values(count);
  bool isBF16 = entry.dtype == "BF16";
  for (size_t i = 0; i < count; ++i) {
    uint16_t raw = uint16_t(bytes[2 * i]) | uint16_t(bytes[2 * i + 1]) << 8;
    values[i] = isBF16 ? bfloat16ToFloat(raw) : halfToFloat(raw);
  }
  return values;
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
    std::shared_ptr<::tfm::SafeTensorsFile> file =
        ::tfm::SafeTensorsFile::open(weightsPath, error);
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

  LogicalResult bind(WeightOp op,
                     const std::shared_ptr<::tfm::SafeTensorsFile> &file) {
    const ::tfm::SafeTensorEntry *entry = file->find(op.getName().str());
    if (!entry)
      return emitError(op.getLoc())
             << "weight '" << op.getName() << "' is not in " << weightsPath;
    auto type = cast<RankedTensorType>(op.getType());
    if (!llvm::is_contained({"F32", "F64", "I32", "I64", "F16", "BF16"},
                            entry->dtype))
      return emitError(op.getLoc())
             << "weight '" << op.getName() << "' has dtype " << entry->dtype
             << " in " << weightsPath
             << ", which tfm does not support yet (F32, F64, "
             << "F16, BF16, I32, I64)";
    StringRef dtype = safetensorsDtypeFor(type.getElementType());
    bool widen = type.getElementType().isF32() &&
                 (entry->dtype == "F16" || entry->dtype == "BF16");
    if (entry->dtype != dtype && !widen)
      return emitError(op.getLoc())
             << "weight '" << op.getName() << "' is " << entry->dtype << " in "
             << weightsPath << " but the model expects "
             << type.getElementType();
    if (ArrayRef<int64_t>(entry->shape) != type.getShape())
      return emitError(op.getLoc())
             << "weight '" << op.getName() << "' is "
             << formatShape(entry->shape) << " in " << weightsPath
             << " but the model expects " << formatShape(type.getShape());
    ElementsAttr data;
    size_t elementBytes = widen ? 2 : ::tfm::safeTensorsDtypeSize(dtype);
    bool aligned = reinterpret_cast<uintptr_t>(entry->data) % elementBytes == 0;
    if (entry->byteSize / elementBytes * 4 >= kResourceBytes && widen) {
      auto values = std::make_shared<std::vector<float>>(widenToF32(*entry));
      ArrayRef<char> bytes(reinterpret_cast<const char *>(values->data()),
                           values->size() * sizeof(float));
      data = DenseResourceElementsAttr::get(
          type, op.getName(),
          AsmResourceBlob(
              bytes, alignof(float), [values](void *, size_t, size_t) {},
              false));
    } else if (entry->byteSize >= kResourceBytes && aligned && !widen) {
      ArrayRef<char> bytes(static_cast<const char *>(entry->data),
                           entry->byteSize);
      data = DenseResourceElementsAttr::get(
          type, op.getName(),
          AsmResourceBlob(
              bytes, elementBytes, [file](void *, size_t, size_t) {}, false));
    } else if (widen) {
      std::vector<float> values = widenToF32(*entry);
      data = DenseElementsAttr::get(type, ArrayRef<float>(values));
    } else {
      data = DenseElementsAttr::getFromRawBuffer(
          type, ArrayRef<char>(static_cast<const char *>(entry->data),
                               entry->byteSize));
    }
    OpBuilder builder(op);
    // The name travels with the constant to its global, where external
    // weights take it as the tensor's name in the sidecar file.
    Location loc = NameLoc::get(op.getNameAttr(), op.getLoc());
    Value constant = arith::ConstantOp::create(builder, loc, type, data);
    op.replaceAllUsesWith(constant);
    op.erase();
    return success();
  }
};
} // namespace
