//===- ExpandHalfCasts.cpp - f32 <-> bf16/f16 as integer operations -------===//
//
// LLVM lowers these conversions to library calls on CPUs without F16C or
// AVX512-BF16; an artifact links nothing but libc and libm, so they become
// integer and f32 arithmetic here, with the rounding of the runtime's
// tfm_f32_to_bf16/f16 (NaNs included), except f32 -> bf16 where the target
// has vcvtneps2bf16. The f16 ones follow FP16
// (github.com/Maratyszcza/FP16: fp16_ieee_to_fp32_value and
// fp16_ieee_from_fp32_value), which let f32 arithmetic do the rounding.
//
//===----------------------------------------------------------------------===//
#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMAttrs.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMEXPANDHALFCASTS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {
/// `element` in the shape of `like` (a scalar or a vector).
Type withElement(Type like, Type element) {
  if (auto vector = dyn_cast<VectorType>(like))
    return vector.clone(element);
  return element;
}

/// Scalar or vector arithmetic on i32 and f32 lanes with splat constants.
struct Lanes {
  OpBuilder &b;
  Location loc;
  Type i32, f32;

  Lanes(OpBuilder &b, Location loc, Type like)
      : b(b), loc(loc), i32(withElement(like, b.getI32Type())),
        f32(withElement(like, b.getF32Type())) {}

  Value constant(Type type, Attribute scalar) {
    if (auto vector = dyn_cast<VectorType>(type))
      return arith::ConstantOp::create(b, loc,
                                       DenseElementsAttr::get(vector, scalar));
    return arith::ConstantOp::create(b, loc, cast<TypedAttr>(scalar));
  }
  Value u32(uint32_t v) {
    return constant(i32, b.getI32IntegerAttr(static_cast<int32_t>(v)));
  }
  Value f(float v) { return constant(f32, b.getF32FloatAttr(v)); }
  Value asInt(Value x) { return arith::BitcastOp::create(b, loc, i32, x); }
  Value asFloat(Value x) { return arith::BitcastOp::create(b, loc, f32, x); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value andBits(Value x, uint32_t mask) {
    return arith::AndIOp::create(b, loc, x, u32(mask));
  }
  Value orBits(Value x, Value y) { return arith::OrIOp::create(b, loc, x, y); }
  Value shr(Value x, uint32_t n) {
    return arith::ShRUIOp::create(b, loc, x, u32(n));
  }
  Value shl(Value x, uint32_t n) {
    return arith::ShLIOp::create(b, loc, x, u32(n));
  }
  /// Unsigned x < y, x > y.
  Value ult(Value x, uint32_t y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, u32(y));
  }
  Value ugt(Value x, uint32_t y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, x, u32(y));
  }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
};

bool isHalf(Type t) { return t.isBF16() || t.isF16(); }

/// Whether LLVM rounds f32 to bf16 with an instruction where `op` is: the
/// whole target has AVX512-BF16 (`module`), or `op`'s function is a variant
/// for it. vcvtneps2bf16 is much faster than the integer expansion, and
/// the GEMM and attention kernels' AVX512-BF16 variants rely on it.
bool nativeBF16(Operation *op, bool module) {
  if (module)
    return true;
  LLVM::TargetFeaturesAttr features = LLVM::TargetFeaturesAttr::featuresAt(op);
  return features && features.contains("+avx512bf16");
}

/// Whether LLVM widens f16 to f32 with vcvtph2ps where `op` is: its
/// function is a variant for F16C (AVX2 variants ask for it, and LLVM's
/// AVX-512F implies it). An f16 KV cache is widened on every read.
bool nativeF16Widening(Operation *op) {
  LLVM::TargetFeaturesAttr features = LLVM::TargetFeaturesAttr::featuresAt(op);
  return features &&
         (features.contains("+f16c") || features.contains("+avx512f"));
}

/// f16 bits (in the low half of i32 lanes) as f32, exactly: a normal f16's
/// bits rebiased and scaled by 2^-112 (which keeps infinities and NaNs), a
/// subnormal one as the f32 (1 + mantissa * 2^-23) * 2^-1 minus 0.5, which
/// is mantissa * 2^-24 exactly.
Value f16ToF32(Lanes &l, Value half) {
  Value w = l.shl(half, 16);
  Value sign = l.andBits(w, 0x80000000u);
  Value twoW = l.add(w, w);
  Value normalized = arith::MulFOp::create(
      l.b, l.loc, l.asFloat(l.add(l.shr(twoW, 4), l.u32(0xe0u << 23))),
      l.f(0x1p-112f));
  Value denormalized = arith::SubFOp::create(
      l.b, l.loc, l.asFloat(l.orBits(l.shr(twoW, 17), l.u32(126u << 23))),
      l.f(0.5f));
  Value bits = l.select(l.ult(twoW, 1u << 27), l.asInt(denormalized),
                        l.asInt(normalized));
  return l.asFloat(l.orBits(sign, bits));
}

/// f32 to f16 bits (in i32 lanes), to nearest with ties to even: scaling |x|
/// by 2^112 then 2^-110 sends values past the largest f16 to infinity;
/// adding a power of two chosen from x's exponent makes the f32 addition
/// round x at f16's precision (subnormals too), and the sum's bits hold the
/// f16's exponent and mantissa. NaNs become the quiet 0x7e00 with x's sign.
Value f32ToF16(Lanes &l, Value x) {
  Value w = l.asInt(x);
  Value shl1 = l.add(w, w);
  Value sign = l.andBits(w, 0x80000000u);
  Value magnitude = l.asFloat(l.andBits(w, 0x7fffffffu));
  Value base = arith::MulFOp::create(
      l.b, l.loc, arith::MulFOp::create(l.b, l.loc, magnitude, l.f(0x1p112f)),
      l.f(0x1p-110f));
  Value bias = l.andBits(shl1, 0xff000000u);
  bias = l.select(l.ult(bias, 0x71000000u), l.u32(0x71000000u), bias);
  base = arith::AddFOp::create(
      l.b, l.loc, l.asFloat(l.add(l.shr(bias, 1), l.u32(0x07800000u))), base);
  Value bits = l.asInt(base);
  Value nonsign =
      l.add(l.andBits(l.shr(bits, 13), 0x7c00u), l.andBits(bits, 0x0fffu));
  nonsign = l.select(l.ugt(shl1, 0xff000000u), l.u32(0x7e00u), nonsign);
  return l.orBits(l.shr(sign, 16), nonsign);
}

/// f32 to bf16 bits (in i32 lanes), to nearest with ties to even: the
/// rounding bias carries into the exponent, up to infinity. NaNs become the
/// quiet 0x7fc0 with x's sign (tfm_f32_to_bf16 gives the same bits).
Value f32ToBF16(Lanes &l, Value x) {
  Value w = l.asInt(x);
  Value rounded =
      l.shr(l.add(l.add(w, l.u32(0x7fffu)), l.andBits(l.shr(w, 16), 1)), 16);
  Value nan = l.orBits(l.andBits(l.shr(w, 16), 0x8000u), l.u32(0x7fc0u));
  return l.select(l.ugt(l.andBits(w, 0x7fffffffu), 0x7f800000u), nan, rounded);
}

/// `x` (bf16 or f16 lanes) as f32, exactly.
Value widenHalf(OpBuilder &b, Location loc, Value x) {
  Type in = getElementTypeOrSelf(x.getType());
  Lanes l(b, loc, x.getType());
  Type i16 = withElement(x.getType(), b.getI16Type());
  Value half = arith::ExtUIOp::create(
      b, loc, l.i32, Value(arith::BitcastOp::create(b, loc, i16, x)));
  return in.isBF16() ? l.asFloat(l.shl(half, 16)) : f16ToF32(l, half);
}

/// `x` (f32 or f64 lanes; f64 through f32, as PyTorch) rounded to `type`'s
/// bf16 or f16.
Value narrowToHalf(OpBuilder &b, Location loc, Value x, Type type) {
  Lanes l(b, loc, type);
  if (getElementTypeOrSelf(x.getType()).isF64())
    x = arith::TruncFOp::create(b, loc, l.f32, x);
  Value bits =
      getElementTypeOrSelf(type).isBF16() ? f32ToBF16(l, x) : f32ToF16(l, x);
  Type i16 = withElement(type, b.getI16Type());
  return arith::BitcastOp::create(
      b, loc, type, Value(arith::TruncIOp::create(b, loc, i16, bits)));
}

/// bf16 and f16 to f32 (and on to f64, exactly).
struct ExpandHalfExtF : OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ExtFOp op,
                                PatternRewriter &rewriter) const override {
    Type in = getElementTypeOrSelf(op.getIn().getType());
    Type out = getElementTypeOrSelf(op.getType());
    if (!isHalf(in) || (!out.isF32() && !out.isF64()))
      return rewriter.notifyMatchFailure(op, "not bf16/f16 to f32/f64");
    if (in.isF16() && out.isF32() && nativeF16Widening(op))
      return rewriter.notifyMatchFailure(op, "the target has vcvtph2ps");
    Value wide = widenHalf(rewriter, op.getLoc(), op.getIn());
    if (out.isF64())
      wide = arith::ExtFOp::create(rewriter, op.getLoc(), op.getType(), wide);
    rewriter.replaceOp(op, wide);
    return success();
  }
};

/// f32 (and f64, through f32 as PyTorch does) to bf16 and f16.
struct ExpandHalfTruncF : OpRewritePattern<arith::TruncFOp> {
  ExpandHalfTruncF(MLIRContext *ctx, bool nativeBF16Target)
      : OpRewritePattern(ctx), nativeBF16Target(nativeBF16Target) {}
  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    Type in = getElementTypeOrSelf(op.getIn().getType());
    Type out = getElementTypeOrSelf(op.getType());
    if ((!in.isF32() && !in.isF64()) || !isHalf(out))
      return rewriter.notifyMatchFailure(op, "not f32/f64 to bf16/f16");
    if (op.getRoundingmodeAttr())
      return rewriter.notifyMatchFailure(op, "not the default rounding");
    if (out.isBF16() && nativeBF16(op, nativeBF16Target))
      return rewriter.notifyMatchFailure(op, "the target has vcvtneps2bf16");
    rewriter.replaceOp(
        op, narrowToHalf(rewriter, op.getLoc(), op.getIn(), op.getType()));
    return success();
  }

private:
  bool nativeBF16Target;
};

/// Any other arith op that reads or makes bf16 or f16: the canonicalizer
/// folds `truncf(sitofp(i8))` into a `sitofp` to bf16, for one, and
/// `extf`s into the comparisons of their results. It becomes the same op on
/// f32 between the conversions above. Moving bits (bitcast, select,
/// constants) needs no arithmetic and stays.
struct ExpandHalfArithmetic : RewritePattern {
  ExpandHalfArithmetic(MLIRContext *ctx, bool nativeBF16Target)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx),
        nativeBF16Target(nativeBF16Target) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!isa<arith::ArithDialect>(op->getDialect()) ||
        isa<arith::ExtFOp, arith::TruncFOp, arith::BitcastOp, arith::ConstantOp,
            arith::SelectOp>(op) ||
        op->getNumRegions() != 0)
      return failure();
    auto half = [](Type t) { return isHalf(getElementTypeOrSelf(t)); };
    if (llvm::none_of(op->getOperandTypes(), half) &&
        llvm::none_of(op->getResultTypes(), half))
      return rewriter.notifyMatchFailure(op, "no bf16 or f16 lanes");
    auto f16 = [](Type t) { return getElementTypeOrSelf(t).isF16(); };
    if (llvm::none_of(op->getOperandTypes(), f16) &&
        llvm::none_of(op->getResultTypes(), f16) &&
        nativeBF16(op, nativeBF16Target))
      return rewriter.notifyMatchFailure(op, "the target has vcvtneps2bf16");
    Location loc = op->getLoc();
    IRMapping mapping;
    for (Value operand : op->getOperands())
      if (half(operand.getType()) && !mapping.contains(operand))
        mapping.map(operand, widenHalf(rewriter, loc, operand));
    Operation *wide = rewriter.clone(*op, mapping);
    SmallVector<Value> results;
    for (auto [result, wideResult] :
         llvm::zip(op->getResults(), wide->getResults())) {
      Type type = result.getType();
      if (!half(type)) {
        results.push_back(wideResult);
        continue;
      }
      Value retyped = wideResult;
      rewriter.modifyOpInPlace(wide, [&] {
        retyped.setType(withElement(type, rewriter.getF32Type()));
      });
      results.push_back(narrowToHalf(rewriter, loc, retyped, type));
    }
    rewriter.replaceOp(op, results);
    return success();
  }

private:
  bool nativeBF16Target;
};

struct TfmExpandHalfCastsPass
    : tfm::impl::TfmExpandHalfCastsBase<TfmExpandHalfCastsPass> {
  using Base::Base;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpandHalfExtF>(&getContext());
    patterns.add<ExpandHalfTruncF, ExpandHalfArithmetic>(&getContext(),
                                                         nativeBF16);
    // One visit per op (what the patterns make needs none): no folding or
    // erasing elsewhere in the module.
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};
} // namespace
