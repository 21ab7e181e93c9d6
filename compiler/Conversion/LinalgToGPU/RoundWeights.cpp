//===- RoundWeights.cpp - Constant weights stored as the kernels read them
//-===//
//
// The tensor-core GEMM rounds its operands to f16/bf16 as it loads them; a
// constant weight read only that way is rounded here, at compile time, so
// that the artifact embeds, uploads and the kernel reads half the bytes.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/Passes.h"
#include "compiler/Transforms/ConstantData.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMGPUROUNDWEIGHTS
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {

/// `global`'s f32 data rounded to `half` (to nearest even, as truncf).
DenseElementsAttr roundedData(memref::GlobalOp global, FloatType half) {
  std::optional<ArrayRef<char>> bytes =
      tfm::getRawConstantData(global.getInitialValueAttr());
  if (!bytes)
    return {};
  ArrayRef<float> values(reinterpret_cast<const float *>(bytes->data()),
                         bytes->size() / sizeof(float));
  std::vector<uint16_t> rounded;
  rounded.reserve(values.size());
  for (float v : values) {
    llvm::APFloat x(v);
    bool lost;
    x.convert(half.getFloatSemantics(), llvm::APFloat::rmNearestTiesToEven,
              &lost);
    rounded.push_back(x.bitcastToAPInt().getZExtValue());
  }
  return DenseElementsAttr::getFromRawBuffer(
      RankedTensorType::get(global.getType().getShape(), half),
      ArrayRef<char>(reinterpret_cast<const char *>(rounded.data()),
                     rounded.size() * sizeof(uint16_t)));
}

struct TfmGpuRoundWeightsPass
    : tfm::impl::TfmGpuRoundWeightsBase<TfmGpuRoundWeightsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    IRRewriter rewriter(&getContext());
    SmallVector<memref::GetGlobalOp> gets;
    module.walk([&](memref::GetGlobalOp get) { gets.push_back(get); });
    llvm::SetVector<memref::GlobalOp> touched;
    for (memref::GetGlobalOp get : gets) {
      auto global = symbols.lookup<memref::GlobalOp>(get.getName());
      if (!global || !global.getConstant() ||
          !global.getType().getElementType().isF32() ||
          !global.getType().getLayout().isIdentity() ||
          !global.getType().hasStaticShape())
        continue;
      // The loads each used only by a truncf to a half type, by that type.
      llvm::MapVector<Type, SmallVector<arith::TruncFOp>> byType;
      for (Operation *user : get->getUsers()) {
        auto load = dyn_cast<memref::LoadOp>(user);
        if (!load || load.getMemRef() != get.getResult() || !load->hasOneUse())
          continue;
        auto trunc = dyn_cast<arith::TruncFOp>(*load->user_begin());
        Type type = trunc ? trunc.getType() : Type();
        if (trunc && (type.isF16() || type.isBF16()) &&
            !trunc.getRoundingmodeAttr() && !trunc.getFastmathAttr())
          byType[type].push_back(trunc);
      }
      for (auto &[type, truncs] : byType) {
        auto half = cast<FloatType>(type);
        std::string name =
            (global.getSymName() + "_" + (half.isF16() ? "f16" : "bf16")).str();
        auto roundedType = MemRefType::get(global.getType().getShape(), half);
        auto rounded = symbols.lookup<memref::GlobalOp>(name);
        if (!rounded) {
          DenseElementsAttr data = roundedData(global, half);
          if (!data)
            continue;
          rewriter.setInsertionPoint(global);
          rounded = memref::GlobalOp::create(
              rewriter, global.getLoc(), name,
              rewriter.getStringAttr("private"), roundedType, data,
              /*constant=*/true, global.getAlignmentAttr());
          symbols.insert(rounded);
        }
        rewriter.setInsertionPointAfter(get);
        Value source = memref::GetGlobalOp::create(
            rewriter, get.getLoc(), roundedType, rounded.getSymName());
        for (arith::TruncFOp trunc : truncs) {
          auto load = trunc.getIn().getDefiningOp<memref::LoadOp>();
          rewriter.setInsertionPoint(load);
          rewriter.replaceOpWithNewOp<memref::LoadOp>(trunc, source,
                                                      load.getIndices());
          rewriter.eraseOp(load);
        }
        touched.insert(global);
      }
      if (get->use_empty())
        rewriter.eraseOp(get);
    }
    for (memref::GlobalOp global : touched)
      if (SymbolTable::symbolKnownUseEmpty(global, module))
        rewriter.eraseOp(global);
  }
};

} // namespace
