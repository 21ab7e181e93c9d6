//===- TileLinalg.cpp - Linalg on buffers to parallel, vectorized tiles ---===//
//
// What the GEMM and attention kernels do not cover (layer norm, elementwise
// chains, head transposes, masks, row reductions) is tiled here in one way
// for every op. The op's "row" loops, those whose iterations write disjoint
// output elements, become an `scf.forall` (convert-forall-to-tasks hands its
// iterations to the caller's threads; a GPU lowering maps the same loop to
// blocks). The innermost loop is cut into tiles of a fixed vector length that
// the linalg vectorizer turns into vector code, and a remainder tile that
// stays scalar. A reduction over the innermost loop accumulates through its
// output element tile by tile, as linalg's semantics allow.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"
#include "compiler/Transforms/TaskFunctions.h"

#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMTILELINALG
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {
/// Elements of the largest tile that is vectorized: larger ones (a full
/// untiled dimension inside the tile) would live in far more vector
/// registers than a CPU has.
constexpr int64_t kMaxVectorTileElements = 1024;

/// How one op is cut.
struct TilingPlan {
  /// Loops run by the forall, one iteration each.
  SmallVector<unsigned> rowLoops;
  /// The loop cut into vector-length tiles, if any.
  std::optional<unsigned> vectorLoop;
};

/// A loop may be split across threads when every output is indexed by it:
/// its iterations then write different elements.
bool writesDisjointElements(linalg::LinalgOp op, unsigned loop) {
  for (OpOperand &init : op.getDpsInitsMutable())
    if (!op.getMatchingIndexingMap(&init).isFunctionOfDim(loop))
      return false;
  return true;
}

/// Whether every operand that the innermost loop walks walks it along its
/// last dimension: a reduction along rows, not a contraction (whose second
/// operand is read down its columns).
bool readsRowsContiguously(linalg::LinalgOp op, unsigned innermost) {
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (!map.isFunctionOfDim(innermost))
      continue;
    if (map.getNumResults() == 0 ||
        map.getResults().back() != getAffineDimExpr(innermost, op.getContext()))
      return false;
  }
  return true;
}

/// LLVM packs a vector of i1 into bits when it stores one, but a memref of
/// i1 (a bool mask) holds a byte per element: such ops stay scalar.
bool hasByteSizedElements(linalg::LinalgOp op) {
  return llvm::all_of(op->getOperandTypes(), [](Type type) {
    Type element = getElementTypeOrSelf(type);
    return !element.isIntOrFloat() || element.getIntOrFloatBitWidth() % 8 == 0;
  });
}

TilingPlan planTiling(linalg::LinalgOp op) {
  TilingPlan plan;
  unsigned loops = op.getNumLoops();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  unsigned innermost = loops - 1;
  unsigned reductions = op.getNumReductionLoops();
  bool rowWise =
      reductions == 0 ||
      (reductions == 1 && linalg::isReductionIterator(iterators[innermost]) &&
       readsRowsContiguously(op, innermost));
  // Elementwise ops, copies and transposes, and reductions along rows: every
  // outer loop is a row, the innermost is vectorized.
  unsigned rowEnd = innermost;
  if (!rowWise) {
    // Contractions and reductions over middle dimensions: the last parallel
    // loop stays in the tile with the reductions, scalar.
    rowEnd = 0;
    for (unsigned i = 0; i < loops; ++i)
      if (linalg::isParallelIterator(iterators[i]))
        rowEnd = i;
  }
  for (unsigned i = 0; i < rowEnd; ++i)
    if (linalg::isParallelIterator(iterators[i]) &&
        writesDisjointElements(op, i))
      plan.rowLoops.push_back(i);
  if (rowWise)
    plan.vectorLoop = innermost;
  return plan;
}

struct TileLinalgPass : tfm::impl::TfmTileLinalgBase<TileLinalgPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    // Outlined kernels (GEMM, attention) are already tiled by hand.
    if (tfm::isTaskFunction(func))
      return;
    if (vectorLength < 1) {
      func.emitError("tfm-tile-linalg: vector-length must be positive");
      return signalPassFailure();
    }
    SmallVector<linalg::LinalgOp> ops;
    func.walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics() && op.getNumLoops() > 0 &&
          !op->getParentOfType<scf::ForallOp>())
        ops.push_back(op);
    });
    for (linalg::LinalgOp op : ops)
      tile(op);
    if (failed(cleanUpVectors(func)))
      return signalPassFailure();
  }

  void tile(linalg::LinalgOp op) {
    TilingPlan plan = planTiling(op);
    Location loc = op.getLoc();
    IRRewriter rewriter(op.getContext());
    rewriter.setInsertionPoint(op);
    SmallVector<OpFoldResult> sizes;
    for (Range range : op.createLoopRanges(rewriter, loc))
      sizes.push_back(range.size);
    SmallVector<int64_t> staticSizes = op.getStaticLoopRanges();

    // Offsets and sizes of the tile inside the forall (rows: one each).
    SmallVector<OpFoldResult> offsets(sizes.size(), rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> tileSizes(sizes.size(), rewriter.getIndexAttr(0));
    if (!plan.rowLoops.empty()) {
      SmallVector<OpFoldResult> lbs, ubs, steps;
      for (unsigned loop : plan.rowLoops) {
        lbs.push_back(rewriter.getIndexAttr(0));
        ubs.push_back(sizes[loop]);
        steps.push_back(rewriter.getIndexAttr(1));
      }
      auto forall = scf::ForallOp::create(rewriter, loc, lbs, ubs, steps,
                                          ValueRange{}, std::nullopt);
      rewriter.setInsertionPoint(forall.getBody()->getTerminator());
      for (auto [i, loop] : llvm::enumerate(plan.rowLoops)) {
        offsets[loop] = forall.getInductionVar(i);
        tileSizes[loop] = rewriter.getIndexAttr(1);
      }
    }

    // The vector loop's tiles are vectorized when the rest of the tile has a
    // static shape small enough for registers.
    std::optional<unsigned> vectorLoop = plan.vectorLoop;
    int64_t otherElements = 1;
    for (unsigned i = 0; i < sizes.size(); ++i) {
      if (llvm::is_contained(plan.rowLoops, i) || vectorLoop == i)
        continue;
      if (ShapedType::isDynamic(staticSizes[i]))
        vectorLoop.reset();
      else
        otherElements *= staticSizes[i];
    }
    int64_t length = vectorLength;
    if (vectorLoop && !ShapedType::isDynamic(staticSizes[*vectorLoop]))
      length = std::min<int64_t>(length, staticSizes[*vectorLoop]);
    if (otherElements * length > kMaxVectorTileElements)
      vectorLoop.reset();

    if (!vectorLoop || length == 0) {
      emitTile(rewriter, op, offsets, tileSizes, sizes, /*vectorize=*/false);
      rewriter.eraseOp(op);
      return;
    }

    // Full vector tiles, then the remainder.
    unsigned v = *vectorLoop;
    Value size = getValueOrCreateConstantIndexOp(rewriter, loc, sizes[v]);
    Value step = arith::ConstantIndexOp::create(rewriter, loc, length);
    Value remainder = rewriter.createOrFold<arith::RemUIOp>(loc, size, step);
    Value full = rewriter.createOrFold<arith::SubIOp>(loc, size, remainder);
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    std::optional<int64_t> staticFull = getConstantIntValue(full);
    if (!staticFull || *staticFull > 0) {
      auto loop = scf::ForOp::create(rewriter, loc, zero, full, step);
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPoint(loop.getBody()->getTerminator());
      offsets[v] = loop.getInductionVar();
      tileSizes[v] = rewriter.getIndexAttr(length);
      emitTile(rewriter, op, offsets, tileSizes, sizes, /*vectorize=*/true);
    }
    std::optional<int64_t> staticRemainder = getConstantIntValue(remainder);
    if (!staticRemainder || *staticRemainder > 0) {
      offsets[v] = full;
      tileSizes[v] = remainder;
      emitTile(rewriter, op, offsets, tileSizes, sizes, /*vectorize=*/false);
    }
    rewriter.eraseOp(op);
  }

  /// A copy of `op` over the tile at `offsets` (tile sizes of 0 take the
  /// whole loop), vectorized when asked and possible.
  void emitTile(IRRewriter &rewriter, linalg::LinalgOp op,
                ArrayRef<OpFoldResult> offsets,
                ArrayRef<OpFoldResult> tileSizes, ArrayRef<OpFoldResult> sizes,
                bool vectorize) {
    Location loc = op.getLoc();
    SmallVector<OpFoldResult> ivs;
    for (auto [offset, tileSize] : llvm::zip(offsets, tileSizes))
      if (!isZeroInteger(tileSize))
        ivs.push_back(offset);
    SmallVector<Value> operands = linalg::makeTiledShapes(
        rewriter, loc, op, op->getOperands(), ivs, tileSizes, sizes,
        /*omitPartialTileCheck=*/true);
    auto tiled = cast<linalg::LinalgOp>(
        mlir::clone(rewriter, op, TypeRange{}, operands));
    linalg::offsetIndices(rewriter, tiled, offsets);
    if (!vectorize || !hasByteSizedElements(tiled) ||
        failed(linalg::vectorizeOpPrecondition(tiled.getOperation())))
      return;
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(tiled);
    if (succeeded(linalg::vectorize(rewriter, tiled.getOperation())))
      rewriter.eraseOp(tiled);
  }

  /// Tiles are vectors of shape 1x...x1xN: drop the unit dims, fold the
  /// subviews into the transfers, and lower what LLVM has no instruction for.
  LogicalResult cleanUpVectors(func::FuncOp func) {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    vector::populateVectorMultiReductionLoweringPatterns(
        patterns, vector::VectorMultiReductionLowering::InnerReduction);
    vector::populateVectorTransferLoweringPatterns(patterns,
                                                   /*maxTransferRank=*/1);
    populateVectorToSCFConversionPatterns(
        patterns, VectorTransferToSCFOptions().enableFullUnroll());
    memref::populateFoldMemRefAliasOpPatterns(patterns);
    scf::ForOp::getCanonicalizationPatterns(patterns, ctx);
    for (Dialect *dialect :
         {static_cast<Dialect *>(
              ctx->getLoadedDialect<vector::VectorDialect>()),
          static_cast<Dialect *>(
              ctx->getLoadedDialect<arith::ArithDialect>())}) {
      dialect->getCanonicalizationPatterns(patterns);
      for (RegisteredOperationName op : ctx->getRegisteredOperations())
        if (&op.getDialect() == dialect)
          op.getCanonicalizationPatterns(patterns, ctx);
    }
    if (failed(applyPatternsGreedily(func, std::move(patterns))))
      return failure();

    // A row tile's sum may add its lanes in any order: strictly in order,
    // LLVM turns a 64-lane vector.reduction into 64 dependent scalar adds
    // (layer norm's mean and variance took 7% of a BERT forward). With
    // `reassoc` it adds the vectors, then halves them in a tree: the tile
    // still adds into the row's output element in order, tile by tile.
    func.walk([&](vector::ReductionOp reduction) {
      if (reduction.getKind() == vector::CombiningKind::ADD &&
          isa<FloatType>(reduction.getType()))
        reduction.setFastmath(arith::FastMathFlags::reassoc);
    });

    // Vector math that LLVM would scalarize into libm calls becomes
    // polynomials, as in the GEMM and attention kernels; scalar math (the
    // remainder tiles) keeps libm's accuracy.
    SmallVector<Operation *> vectorMath;
    func.walk([&](Operation *op) {
      if (isa<math::ErfOp, math::TanhOp, math::ExpOp>(op) &&
          isa<VectorType>(op->getResult(0).getType()))
        vectorMath.push_back(op);
    });
    if (vectorMath.empty())
      return success();
    RewritePatternSet approximations(ctx);
    populateMathPolynomialApproximationPatterns(
        approximations, [](StringRef name) {
          return name == "erf" || name == "tanh" || name == "exp" ||
                 name == math::ErfOp::getOperationName() ||
                 name == math::TanhOp::getOperationName() ||
                 name == math::ExpOp::getOperationName();
        });
    return applyOpPatternsGreedily(vectorMath, std::move(approximations));
  }
};
} // namespace
