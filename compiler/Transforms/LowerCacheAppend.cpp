//===- LowerCacheAppend.cpp - Cache appends to copies of the new rows -----===//
//
// A bufferized tfm.cache_append writes each sequence's new rows into the
// caller's cache at that sequence's offset. Sequences differ in offset, so
// the copy is one subview per sequence; the cache itself is neither read nor
// moved, which keeps a decode step's cost independent of the cache's size.
//
//===----------------------------------------------------------------------===//
#include "compiler/Transforms/Passes.h"
#include "dialects/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMLOWERCACHEAPPEND
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {
/// The subview of `buffer` holding sequence `b`'s `count` rows from `at`
/// along `dim` (every other dim whole), rank preserved.
Value sequenceRows(OpBuilder &b, Location loc, Value buffer, Value sequence,
                   int64_t dim, OpFoldResult at, Value count) {
  auto type = cast<MemRefType>(buffer.getType());
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes, strides(type.getRank(), b.getIndexAttr(1));
  for (int64_t d = 0; d < type.getRank(); ++d)
    sizes.push_back(memref::getMixedSize(b, loc, buffer, d));
  offsets[0] = sequence;
  sizes[0] = b.getIndexAttr(1);
  offsets[dim] = at;
  sizes[dim] = count;
  return memref::SubViewOp::create(b, loc, buffer, offsets, sizes, strides);
}

struct LowerCacheAppend : OpRewritePattern<CacheAppendOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CacheAppendOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureBufferSemantics())
      return rewriter.notifyMatchFailure(op, "not bufferized");
    Location loc = op.getLoc();
    int64_t dim = op.getDim();
    auto index = [&](int64_t v) {
      return arith::ConstantIndexOp::create(rewriter, loc, v);
    };
    auto i32 = [&](int64_t v) {
      return arith::ConstantOp::create(rewriter, loc,
                                       rewriter.getI32IntegerAttr(v));
    };
    Value sequences = memref::DimOp::create(rewriter, loc, op.getCache(), 0);
    Value count = memref::DimOp::create(rewriter, loc, op.getRows(), dim);
    Value capacity = memref::DimOp::create(rewriter, loc, op.getCache(), dim);
    // The last offset at which `count` rows fit (negative when none does).
    Value lastOffset = arith::SubIOp::create(rewriter, loc, capacity, count);
    Value ok = i32(0), failedCode = i32(op.getCode());
    auto loop = scf::ForOp::create(
        rewriter, loc, index(0), sequences, index(1), ValueRange{ok},
        [&](OpBuilder &b, Location, Value sequence, ValueRange status) {
          Value offset = arith::IndexCastOp::create(
              b, loc, b.getIndexType(),
              memref::LoadOp::create(b, loc, op.getOffset(),
                                     ValueRange{sequence}));
          Value fits = arith::AndIOp::create(
              b, loc,
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, offset,
                                    index(0)),
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, offset,
                                    lastOffset));
          scf::IfOp::create(b, loc, fits, [&](OpBuilder &then, Location) {
            Value source = sequenceRows(then, loc, op.getRows(), sequence, dim,
                                        then.getIndexAttr(0), count);
            Value target = sequenceRows(then, loc, op.getCache(), sequence, dim,
                                        offset, count);
            memref::CopyOp::create(then, loc, source, target);
            scf::YieldOp::create(then, loc);
          });
          Value next =
              arith::SelectOp::create(b, loc, fits, status[0], failedCode);
          scf::YieldOp::create(b, loc, next);
        });
    rewriter.replaceOp(op, loop.getResult(0));
    return success();
  }
};

struct TfmLowerCacheAppendPass
    : tfm::impl::TfmLowerCacheAppendBase<TfmLowerCacheAppendPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<LowerCacheAppend>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
