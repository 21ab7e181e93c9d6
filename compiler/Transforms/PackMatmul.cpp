//===- PackMatmul.cpp - Matmuls between activations onto the packed GEMM --===//
//
// A matmul whose right operand is computed at run time (attention's Q·Kᵀ and
// P·V when they are not fused, a pooling matrix, any `a @ b` of two inputs)
// cannot be packed at compile time like a linear layer's weight. It is
// packed at run time instead, as a BLAS packs its operands: B [..., K, N] is
// laid out in the micro-kernel's panels, Bp [..., ceil(N/nr), K, nr], by a
// zero-padded copy and a transpose (both tiled and vectorized by
// tfm-tile-linalg), and the product becomes the same tfm.packed_linear that
// linear layers use, one per batch of the output. Packing costs O(K·N) next
// to the product's O(M·K·N), so matmuls with fewer than `min-rows` rows keep
// the generic path.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"
#include "dialects/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMPACKMATMUL
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {
/// How a contraction generic (as convert-tfm-to-linalg writes `tfm.matmul`)
/// reads its operands: loops (batch..., m, n, k), the output indexed by
/// (batch..., m, n), A by (its batch dims..., m, k) and B by (its batch
/// dims..., k, n), where an operand's batch index is a loop or 0 (a size-1
/// dim broadcast).
struct MatmulForm {
  unsigned outRank = 0;
  /// Per batch dim of A (B): the output batch loop it follows, or nullopt
  /// when it is broadcast (always index 0).
  SmallVector<std::optional<unsigned>> aBatch, bBatch;
};

bool isMultiplyAccumulate(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  if (body.getNumArguments() != 3 || body.getOperations().size() != 3)
    return false;
  auto mul = dyn_cast<arith::MulFOp>(&body.front());
  auto add = dyn_cast<arith::AddFOp>(mul ? mul->getNextNode() : nullptr);
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  if (!mul || !add || !yield || yield.getValues().size() != 1 ||
      yield.getValues()[0] != add.getResult())
    return false;
  auto isArg = [&](Value v, unsigned i) { return v == body.getArgument(i); };
  bool mulReadsInputs = (isArg(mul.getLhs(), 0) && isArg(mul.getRhs(), 1)) ||
                        (isArg(mul.getLhs(), 1) && isArg(mul.getRhs(), 0));
  bool addsToAcc = (isArg(add.getLhs(), 2) && add.getRhs() == mul) ||
                   (isArg(add.getRhs(), 2) && add.getLhs() == mul);
  return mulReadsInputs && addsToAcc;
}

/// Reads a batch index expression: a loop below `batchLoops`, or constant 0.
bool readBatchIndex(AffineExpr expr, unsigned batchLoops,
                    SmallVectorImpl<std::optional<unsigned>> &out) {
  if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
    if (dim.getPosition() >= batchLoops)
      return false;
    out.push_back(dim.getPosition());
    return true;
  }
  auto constant = dyn_cast<AffineConstantExpr>(expr);
  if (!constant || constant.getValue() != 0)
    return false;
  out.push_back(std::nullopt);
  return true;
}

std::optional<MatmulForm> matchMatmul(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !isMultiplyAccumulate(op))
    return std::nullopt;
  for (Type type : op->getOperandTypes())
    if (!getElementTypeOrSelf(type).isF32())
      return std::nullopt;
  unsigned loops = op.getNumLoops();
  if (loops < 3 || op.getNumReductionLoops() != 1 ||
      !linalg::isReductionIterator(op.getIteratorTypesArray().back()))
    return std::nullopt;
  MatmulForm form;
  form.outRank = loops - 1;
  unsigned m = loops - 3, n = loops - 2, k = loops - 1;
  AffineMap out = op.getIndexingMapsArray()[2];
  if (out != AffineMap::getMultiDimIdentityMap(loops, op.getContext())
                 .getMajorSubMap(form.outRank))
    return std::nullopt;
  auto readOperand = [&](AffineMap map, unsigned rowLoop, unsigned colLoop,
                         SmallVectorImpl<std::optional<unsigned>> &batch) {
    unsigned results = map.getNumResults();
    if (results < 2 ||
        map.getResult(results - 2) !=
            getAffineDimExpr(rowLoop, op.getContext()) ||
        map.getResult(results - 1) !=
            getAffineDimExpr(colLoop, op.getContext()))
      return false;
    for (unsigned i = 0; i + 2 < results; ++i)
      if (!readBatchIndex(map.getResult(i), m, batch))
        return false;
    return true;
  };
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (!readOperand(maps[0], m, k, form.aBatch) ||
      !readOperand(maps[1], k, n, form.bBatch))
    return std::nullopt;
  return form;
}

/// The sizes of `value`'s dims, static where its type knows them.
SmallVector<OpFoldResult> sizesOf(OpBuilder &b, Location loc, Value value) {
  return tensor::getMixedSizes(b, loc, value);
}

struct PackMatmulPattern : OpRewritePattern<linalg::GenericOp> {
  PackMatmulPattern(MLIRContext *ctx, int64_t panelWidth, int64_t minRows)
      : OpRewritePattern(ctx), panelWidth(panelWidth), minRows(minRows) {}

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<MatmulForm> form = matchMatmul(op);
    if (!form)
      return rewriter.notifyMatchFailure(op, "not a batched f32 matmul");
    // The output starts at zero (tfm.matmul's fill): packed_linear
    // overwrites its init, so it takes the fill's destination.
    auto fill = op.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
    if (!fill || !matchPattern(fill.getInputs()[0], m_AnyZeroFloat()))
      return rewriter.notifyMatchFailure(op, "the output does not start at 0");
    Value a = op.getDpsInputs()[0], b = op.getDpsInputs()[1];
    auto aType = cast<RankedTensorType>(a.getType());
    int64_t rows = aType.getShape()[aType.getRank() - 2];
    if (!ShapedType::isDynamic(rows) && rows < minRows)
      return rewriter.notifyMatchFailure(op, "too few rows to pay for packing");

    Location loc = op.getLoc();
    Value packed = pack(rewriter, loc, b);
    Value dest = fill.getOutputs()[0];
    Value result;
    bool sharedRight = form->bBatch.empty();
    bool aFollowsOutput =
        form->aBatch.size() + 2 == form->outRank &&
        llvm::all_of(llvm::enumerate(form->aBatch),
                     [](auto e) { return e.value() == e.index(); });
    if (sharedRight && aFollowsOutput) {
      // One right operand for every batch: the rows of all batches are the
      // GEMM's rows.
      result = createProduct(rewriter, loc, a, packed, dest);
    } else {
      result = perBatch(rewriter, loc, *form, a, packed, dest);
    }
    rewriter.replaceOp(op, result);
    return success();
  }

  /// B [..., K, N] -> Bp [..., ceil(N/nr), K, nr], zero past N.
  Value pack(PatternRewriter &rewriter, Location loc, Value b) const {
    auto type = cast<RankedTensorType>(b.getType());
    int64_t rank = type.getRank();
    Type f32 = type.getElementType();
    SmallVector<OpFoldResult> sizes = sizesOf(rewriter, loc, b);
    OpFoldResult n = sizes.back();
    AffineExpr s0;
    bindSymbols(rewriter.getContext(), s0);
    OpFoldResult panels = affine::makeComposedFoldedAffineApply(
        rewriter, loc, s0.ceilDiv(panelWidth), {n});
    OpFoldResult paddedN = affine::makeComposedFoldedAffineApply(
        rewriter, loc, s0.ceilDiv(panelWidth) * panelWidth, {n});

    // Zero-padded to whole panels (a copy only when N is not a multiple).
    Value padded = b;
    std::optional<int64_t> staticN = getConstantIntValue(n);
    if (!staticN || *staticN % panelWidth != 0) {
      SmallVector<OpFoldResult> paddedSizes(sizes);
      paddedSizes.back() = paddedN;
      Value empty = tensor::EmptyOp::create(rewriter, loc, paddedSizes, f32);
      Value zero = arith::ConstantOp::create(rewriter, loc,
                                             rewriter.getF32FloatAttr(0.0f));
      Value zeros =
          linalg::FillOp::create(rewriter, loc, zero, empty).getResult(0);
      SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
      SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
      padded = tensor::InsertSliceOp::create(rewriter, loc, b, zeros, offsets,
                                             sizes, strides);
    }

    // [..., K, P*nr] -> [..., K, P, nr] -> [..., P, K, nr].
    SmallVector<OpFoldResult> expandedSizes(sizes.begin(), sizes.end() - 1);
    expandedSizes.push_back(panels);
    expandedSizes.push_back(rewriter.getIndexAttr(panelWidth));
    SmallVector<ReassociationIndices> reassociation;
    for (int64_t i = 0; i + 1 < rank; ++i)
      reassociation.push_back({i});
    reassociation.push_back({rank - 1, rank});
    auto expandedType = RankedTensorType::get(
        llvm::to_vector(llvm::map_range(
            expandedSizes,
            [](OpFoldResult s) {
              return getConstantIntValue(s).value_or(ShapedType::kDynamic);
            })),
        f32);
    Value expanded = tensor::ExpandShapeOp::create(
        rewriter, loc, expandedType, padded, reassociation, expandedSizes);

    SmallVector<int64_t> permutation;
    for (int64_t i = 0; i + 2 < rank; ++i)
      permutation.push_back(i);
    permutation.append({rank - 1, rank - 2, rank});
    SmallVector<OpFoldResult> packedSizes =
        applyPermutation(expandedSizes, permutation);
    Value init = tensor::EmptyOp::create(rewriter, loc, packedSizes, f32);
    return linalg::TransposeOp::create(rewriter, loc, expanded, init,
                                       permutation)
        .getResult()[0];
  }

  Value createProduct(PatternRewriter &rewriter, Location loc, Value a,
                      Value packed, Value dest) const {
    return PackedLinearOp::create(rewriter, loc, TypeRange{dest.getType()}, a,
                                  packed, /*weightScales=*/Value(),
                                  /*weightSums=*/Value(),
                                  /*weightOffsets=*/Value(),
                                  /*weightSuperScales=*/Value(),
                                  /*bias=*/Value(),
                                  /*residual=*/Value(), dest, Activation::none)
        .getResult()[0];
  }

  /// One packed product per output batch, each reading its batch of A and
  /// of Bp (index 0 where a batch dim broadcasts).
  Value perBatch(PatternRewriter &rewriter, Location loc,
                 const MatmulForm &form, Value a, Value packed,
                 Value dest) const {
    SmallVector<OpFoldResult> outSizes = sizesOf(rewriter, loc, dest);
    unsigned batchDims = form.outRank - 2;
    SmallVector<Value> lbs, ubs, steps;
    for (unsigned i = 0; i < batchDims; ++i) {
      lbs.push_back(arith::ConstantIndexOp::create(rewriter, loc, 0));
      ubs.push_back(
          getValueOrCreateConstantIndexOp(rewriter, loc, outSizes[i]));
      steps.push_back(arith::ConstantIndexOp::create(rewriter, loc, 1));
    }
    scf::LoopNest nest = scf::buildLoopNest(
        rewriter, loc, lbs, ubs, steps, ValueRange{dest},
        [&](OpBuilder &b, Location loc, ValueRange ivs, ValueRange iter) {
          Value aSlice = sliceBatch(b, loc, a, form.aBatch, ivs, 2);
          Value bSlice = sliceBatch(b, loc, packed, form.bBatch, ivs, 3);
          SmallVector<std::optional<unsigned>> outBatch;
          for (unsigned i = 0; i < batchDims; ++i)
            outBatch.push_back(i);
          Value cSlice = sliceBatch(b, loc, iter[0], outBatch, ivs, 2);
          Value product = PackedLinearOp::create(
                              b, loc, TypeRange{cSlice.getType()}, aSlice,
                              bSlice, Value(), Value(), Value(), Value(),
                              Value(), Value(), cSlice, Activation::none)
                              .getResult()[0];
          return SmallVector<Value>{
              insertBatch(b, loc, product, iter[0], outBatch, ivs)};
        });
    return nest.results[0];
  }

  /// `source`'s tile at the batch indices (rank-reduced to its last `keep`
  /// dims).
  static Value sliceBatch(OpBuilder &b, Location loc, Value source,
                          ArrayRef<std::optional<unsigned>> batch,
                          ValueRange ivs, unsigned keep) {
    SmallVector<OpFoldResult> offsets, sizes, strides;
    batchIndices(b, source, batch, ivs, keep, offsets, sizes, strides);
    auto type = cast<RankedTensorType>(source.getType());
    auto sliceType = RankedTensorType::get(type.getShape().take_back(keep),
                                           type.getElementType());
    return tensor::ExtractSliceOp::create(b, loc, sliceType, source, offsets,
                                          sizes, strides);
  }

  static Value insertBatch(OpBuilder &b, Location loc, Value tile, Value into,
                           ArrayRef<std::optional<unsigned>> batch,
                           ValueRange ivs) {
    SmallVector<OpFoldResult> offsets, sizes, strides;
    batchIndices(b, into, batch, ivs, 2, offsets, sizes, strides);
    return tensor::InsertSliceOp::create(b, loc, tile, into, offsets, sizes,
                                         strides);
  }

  static void batchIndices(OpBuilder &b, Value source,
                           ArrayRef<std::optional<unsigned>> batch,
                           ValueRange ivs, unsigned keep,
                           SmallVectorImpl<OpFoldResult> &offsets,
                           SmallVectorImpl<OpFoldResult> &sizes,
                           SmallVectorImpl<OpFoldResult> &strides) {
    SmallVector<OpFoldResult> full = sizesOf(b, source.getLoc(), source);
    for (std::optional<unsigned> loop : batch) {
      offsets.push_back(loop ? OpFoldResult(ivs[*loop]) : b.getIndexAttr(0));
      sizes.push_back(b.getIndexAttr(1));
    }
    for (unsigned i = full.size() - keep; i < full.size(); ++i) {
      offsets.push_back(b.getIndexAttr(0));
      sizes.push_back(full[i]);
    }
    strides.assign(full.size(), b.getIndexAttr(1));
  }

  int64_t panelWidth, minRows;
};

struct TfmPackMatmulPass : tfm::impl::TfmPackMatmulBase<TfmPackMatmulPass> {
  using Base::Base;
  void runOnOperation() override {
    // The panels of tfm-pack-linear: two vectors of the widest variant.
    int64_t panelWidth =
        2 * std::max<int64_t>((multiversion ? 512 : vectorBits) / 32, 1);
    RewritePatternSet patterns(&getContext());
    patterns.add<PackMatmulPattern>(&getContext(), panelWidth, minRows);
    GreedyRewriteConfig config;
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      signalPassFailure();
  }
};
} // namespace
