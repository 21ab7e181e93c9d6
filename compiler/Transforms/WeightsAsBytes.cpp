//===- WeightsAsBytes.cpp - Constant buffers as flat byte arrays ----------===//
//
// A packed weight [panels, K, 32] becomes, in LLVM, an array of arrays of
// 32-float arrays: millions of small constants, each uniqued by content in
// the LLVMContext and emitted float by float. As one byte array the same
// data is one constant that the object writer copies in one go. Users see
// the original shape through a memref.view.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/ConstantData.h"
#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMWEIGHTSASBYTES
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {
/// Smaller constants are left alone: their nesting costs nothing.
constexpr int64_t kMinBytes = 4096;
constexpr int64_t kAlignment = 64;

struct TfmWeightsAsBytesPass
    : tfm::impl::TfmWeightsAsBytesBase<TfmWeightsAsBytesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    DenseMap<StringAttr, memref::GlobalOp> flattened;
    for (auto global :
         llvm::make_early_inc_range(module.getOps<memref::GlobalOp>())) {
      std::optional<ArrayRef<char>> rawData = mlir::tfm::getRawConstantData(
          global.getInitialValue().value_or(Attribute()));
      MemRefType type = global.getType();
      if (!global.getConstant() || !rawData || !type.hasStaticShape() ||
          !type.getLayout().isIdentity() ||
          !type.getElementType().isIntOrFloat() ||
          type.getElementTypeBitWidth() % 8 != 0)
        continue;
      int64_t bytes = type.getNumElements() * type.getElementTypeBitWidth() / 8;
      if (bytes < kMinBytes || int64_t(rawData->size()) != bytes)
        continue;
      OpBuilder b(global);
      auto byteType = RankedTensorType::get({bytes}, b.getI8Type());
      // A blob over the typed attribute's (or blob's) storage, which lives
      // as long as the context: the bytes are not copied again (a 340 MB
      // model would otherwise hold them twice more in the context).
      auto raw = DenseResourceElementsAttr::get(
          byteType, "tfm_weight",
          UnmanagedAsmResourceBlob::allocateWithAlign(*rawData, /*align=*/1));
      auto alignment =
          std::max<uint64_t>(global.getAlignment().value_or(1), kAlignment);
      auto flat = memref::GlobalOp::create(
          b, global.getLoc(), global.getSymName(),
          global.getSymVisibilityAttr(),
          MemRefType::get({bytes}, b.getI8Type()), raw, /*constant=*/true,
          b.getI64IntegerAttr(alignment));
      flattened[flat.getSymNameAttr()] = flat;
      global.erase();
    }
    if (flattened.empty())
      return;
    module.walk([&](memref::GetGlobalOp get) {
      memref::GlobalOp flat = flattened.lookup(get.getNameAttr().getAttr());
      if (!flat)
        return;
      OpBuilder b(get);
      Value bytes = memref::GetGlobalOp::create(b, get.getLoc(), flat.getType(),
                                                flat.getSymName());
      Value zero = arith::ConstantIndexOp::create(b, get.getLoc(), 0);
      Value view = memref::ViewOp::create(b, get.getLoc(), get.getType(), bytes,
                                          zero, ValueRange{});
      get.replaceAllUsesWith(view);
      get.erase();
    });
  }
};
} // namespace
