//===- TileAttention.cpp - tfm.attention as a forall of tiles -------------===//
#include "compiler/Transforms/Passes.h"
#include "dialects/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMTILEATTENTION
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {
struct TileAttentionPass
    : public tfm::impl::TfmTileAttentionBase<TileAttentionPass> {
  using TfmTileAttentionBase::TfmTileAttentionBase;

  void runOnOperation() override {
    if (batchTile < 0 || queryTile < 0 || valueTile < 0) {
      getOperation().emitError("tile sizes must not be negative");
      return signalPassFailure();
    }
    SmallVector<AttentionOp> ops;
    getOperation().walk([&](AttentionOp op) {
      if (!op.hasPureBufferSemantics())
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (AttentionOp op : ops) {
      unsigned batchDims = op.getNumBatchDims();
      SmallVector<OpFoldResult> tiles(batchDims,
                                      rewriter.getIndexAttr(batchTile));
      // Causal rows of a tile are placed by a per-sequence query_offset,
      // which needs a batch dim: without one the queries stay whole.
      bool rowsTileable = !op.getCausal() || batchDims > 0;
      tiles.push_back(rewriter.getIndexAttr(rowsTileable ? queryTile : 0));
      tiles.push_back(rewriter.getIndexAttr(valueTile));
      scf::SCFTilingOptions options;
      options.setTileSizes(tiles);
      options.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
      rewriter.setInsertionPoint(op);
      FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
          rewriter, cast<TilingInterface>(op.getOperation()), options);
      if (failed(tiled)) {
        op.emitOpError("could not be tiled");
        return signalPassFailure();
      }
      rewriter.replaceOp(op, tiled->replacements);
    }
  }
};
} // namespace
