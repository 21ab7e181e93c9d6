//===- WidenLowPrecision.cpp - Compute bf16 and f16 ops in f32 ------------===//
//
// bf16 and f16 hold tensors; arithmetic on them happens in f32, as PyTorch
// computes them on the CPU. Each tfm op that computes and reads or writes
// such a tensor becomes the same op on f32 between tfm.casts: an exact
// widening per operand, one rounding per result. So a linear, matmul or
// attention on bf16/f16 lowers as extf -> the f32 op -> truncf, and the
// packed GEMM (tfm-pack-linear, convert-linear-to-cpu) and the attention
// kernels keep working unchanged on f32 while they are made typed (bf16
// and int8 GEMM kernels, issue 21); the other lowerings see f32 too.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/Passes.h"
#include "dialects/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMWIDENLOWPRECISION
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {
bool isLowPrecision(Type type) {
  Type element = getElementTypeOrSelf(type);
  return element.isBF16() || element.isF16();
}

/// The ops whose result is not just some of their operands' elements: the
/// ones left out (cast, reshape, permute, transpose, concat, where,
/// masked_fill, causal_mask, embedding, cache_append) are exact in any type.
bool computes(Operation *op) {
  return isa<AddOp, SubOp, MulOp, DivOp, MaximumOp, MinimumOp, PowOp, CompareOp,
             ExpOp, LogOp, SqrtOp, RsqrtOp, TanhOp, ErfOp, SinOp, CosOp, NegOp,
             AbsOp, ReduceOp, ScaleOp, SoftmaxOp, ReluOp, GeluOp, MatmulOp,
             LinearOp, LayerNormOp, PositionalEncodingOp, SdpaOp,
             MultiHeadAttentionOp, AttentionOp>(op);
}

struct WidenLowPrecision : RewritePattern {
  /// Before the lowering patterns, which would compute in the narrow type.
  explicit WidenLowPrecision(MLIRContext *ctx)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/2, ctx) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!computes(op))
      return failure();
    if (llvm::none_of(op->getOperandTypes(), isLowPrecision) &&
        llvm::none_of(op->getResultTypes(), isLowPrecision))
      return rewriter.notifyMatchFailure(op, "no bf16 or f16 tensor");
    if (llvm::any_of(op->getOperandTypes(), llvm::IsaPred<MemRefType>))
      return rewriter.notifyMatchFailure(op, "on buffers");
    // f32 attention over a bf16/f16 key/value cache: the kernels read the
    // narrow K and V in place; widening them would copy the whole cache.
    if (auto attention = dyn_cast<AttentionOp>(op);
        attention && !isLowPrecision(attention.getQuery().getType()) &&
        !isLowPrecision(attention.getInit().getType()))
      return rewriter.notifyMatchFailure(op, "reads a bf16/f16 cache as it is");
    // f64 when an operand is f64 (a cast's worth of precision is not
    // given away), else f32.
    auto isF64 = [](Type t) { return getElementTypeOrSelf(t).isF64(); };
    Type wide = llvm::any_of(op->getOperandTypes(), isF64) ||
                        llvm::any_of(op->getResultTypes(), isF64)
                    ? Type(rewriter.getF64Type())
                    : Type(rewriter.getF32Type());

    Location loc = op->getLoc();
    auto dps = dyn_cast<DestinationStyleOpInterface>(op);
    IRMapping mapping;
    for (OpOperand &operand : op->getOpOperands()) {
      Value v = operand.get();
      auto type = dyn_cast<RankedTensorType>(v.getType());
      if (!type || !isLowPrecision(type) || mapping.contains(v))
        continue;
      RankedTensorType wideType = type.clone(wide);
      if (dps && dps.isDpsInit(&operand)) {
        // An init is only written: a fresh tensor of its shape will do.
        SmallVector<Value> sizes;
        for (int64_t d = 0; d < type.getRank(); ++d)
          if (type.isDynamicDim(d))
            sizes.push_back(tensor::DimOp::create(rewriter, loc, v, d));
        mapping.map(v, tensor::EmptyOp::create(rewriter, loc, wideType, sizes)
                           .getResult());
        continue;
      }
      mapping.map(v, CastOp::create(rewriter, loc, wideType, v).getResult());
    }
    Operation *widened = rewriter.clone(*op, mapping);
    SmallVector<Value> results;
    for (auto [result, wideResult] :
         llvm::zip(op->getResults(), widened->getResults())) {
      auto type = dyn_cast<RankedTensorType>(result.getType());
      if (!type || !isLowPrecision(type)) {
        results.push_back(wideResult);
        continue;
      }
      Value retyped = wideResult;
      rewriter.modifyOpInPlace(widened,
                               [&] { retyped.setType(type.clone(wide)); });
      results.push_back(
          CastOp::create(rewriter, loc, type, wideResult).getResult());
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct TfmWidenLowPrecisionPass
    : tfm::impl::TfmWidenLowPrecisionBase<TfmWidenLowPrecisionPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateWidenLowPrecisionPatterns(patterns);
    // One visit per op: the widened ops are f32 and match no more; nothing
    // else (no folding, no dead-code removal) happens to the model.
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};
} // namespace

void mlir::tfm::populateWidenLowPrecisionPatterns(RewritePatternSet &patterns) {
  patterns.add<WidenLowPrecision>(patterns.getContext());
}
