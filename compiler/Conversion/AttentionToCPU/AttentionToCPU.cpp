//===- AttentionToCPU.cpp - tfm.attention to flash-attention tasks --------===//
//
// convert-attention-to-cpu: each bufferized tfm.attention becomes the
// flash-attention loop nest of FlashAttention.cpp, one tiling per kernel
// variant (and a one-vector query block for decode steps over a cache),
// then the kernels' exponentials become polynomials and their transposes
// shuffles, leaving the rest of the module as it was.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/AttentionToCPU/FlashAttention.h"
#include "compiler/Conversion/KernelVariants/KernelVariants.h"
#include "compiler/Conversion/Passes.h"
#include "dialects/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <numeric>

namespace mlir::tfm {
#define GEN_PASS_DEF_CONVERTATTENTIONTOCPU
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {
struct ConvertAttentionToCPUPass
    : tfm::impl::ConvertAttentionToCPUBase<ConvertAttentionToCPUPass> {
  using ConvertAttentionToCPUBase::ConvertAttentionToCPUBase;

  void runOnOperation() override {
    if (vectorBits != 128 && vectorBits != 256 && vectorBits != 512) {
      getOperation().emitError("vector-bits must be 128, 256 or 512");
      return signalPassFailure();
    }
    SmallVector<AttentionOp> ops;
    getOperation().walk([&](AttentionOp op) { ops.push_back(op); });
    // The exponentials and transposes that are not the kernels': only the
    // kernels' are lowered here, so the rest of the module keeps its
    // numerics and its lowering.
    DenseSet<Operation *> others;
    getOperation().walk([&](Operation *op) {
      if (isa<math::ExpOp, vector::TransposeOp>(op))
        others.insert(op);
    });
    for (AttentionOp op : ops) {
      if (!op.hasPureBufferSemantics()) {
        op.emitOpError("must be bufferized before convert-attention-to-cpu");
        return signalPassFailure();
      }
      unsigned bits =
          cast<MemRefType>(op.getQuery().getType()).getElementTypeBitWidth();
      OpBuilder b(op);
      bool failedAny = false;
      // With bf16, AVX512-BF16 (level 5) and AMX (level 6) variants: Intel
      // runs vdpbf16ps at half its f32 FMA rate, so on Intel's CPUs, the
      // ones with AMX, QK^T and PV go to the tiles instead.
      SmallVector<KernelVariant> variants = getKernelVariants(
          vectorBits, multiversion, bf16 ? DotProduct::BF16 : DotProduct::FMA,
          TargetDotProducts{targetBF16Dot, false},
          /*amx=*/bf16 && multiversion);
      // Over a cache, a decode step has one query per sequence: with a
      // block of one vector of queries instead of blockQ, the scores and the
      // softmax leave 16x fewer lanes idle.
      auto tilingOf = [&](const KernelVariant &variant, bool few) {
        FlashAttentionTiling tiling =
            defaultFlashAttentionTiling(variant.vectorBits, bits);
        auto override = [](int64_t option, int64_t &field) {
          if (option > 0)
            field = option;
        };
        override(microRows, tiling.microRows);
        override(keyVectors, tiling.keyVectors);
        override(valueVectors, tiling.valueVectors);
        override(blockQ, tiling.blockQ);
        // AMX multiplies whole tiles of 32 keys.
        if (variant.amx)
          tiling.keyVectors = llvm::alignTo(tiling.keyVectors, 2);
        // Each key block's rows are rounded and its values transposed once
        // per query block: 128 queries halve that (BERT-sized attention
        // 1.08-1.15x faster than 64 on Sapphire Rapids; 256 was slower).
        if (variant.amx && blockQ <= 0)
          tiling.blockQ = 2 * tiling.blockQ;
        // Query blocks are whole vectors (queries run along the lanes)
        // and whole micro-kernels.
        int64_t unit = std::lcm(tiling.microRows, tiling.lanes);
        tiling.blockQ = few ? unit : llvm::alignTo(tiling.blockQ, unit);
        if (few)
          tiling.queryVectors = 1;
        return tiling;
      };
      // Every variant's tasks cover the same queries, whole blocks of each.
      auto tilingsFor = [&](bool few) {
        int64_t taskBlockQ = 1;
        for (const KernelVariant &variant : variants)
          taskBlockQ = std::lcm(taskBlockQ, tilingOf(variant, few).blockQ);
        return [=](const KernelVariant &variant) {
          FlashAttentionTiling tiling = tilingOf(variant, few);
          tiling.taskBlockQ = taskBlockQ;
          return tiling;
        };
      };
      auto emitWith = [&](bool few, OpBuilder &at) {
        failedAny |=
            failed(emitFlashAttention(op, variants, tilingsFor(few), at, bf16));
      };
      if (!op.getKvLength() && !op.getQueryOffset()) {
        emitWith(/*few=*/false, b);
      } else {
        Location loc = op.getLoc();
        Value queries = queryLength(b, loc, op);
        Value isFew = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::ule, queries,
            arith::ConstantIndexOp::create(
                b, loc, tilingsFor(true)(variants.back()).taskBlockQ));
        auto branch = scf::IfOp::create(b, loc, isFew,
                                        /*withElseRegion=*/true);
        OpBuilder thenBuilder = branch.getThenBodyBuilder();
        emitWith(/*few=*/true, thenBuilder);
        OpBuilder elseBuilder = branch.getElseBodyBuilder();
        emitWith(/*few=*/false, elseBuilder);
      }
      if (failedAny)
        return signalPassFailure();
      op.erase();
    }
    SmallVector<Operation *> kernelExps, kernelTransposes;
    getOperation().walk([&](Operation *op) {
      if (others.contains(op))
        return;
      if (isa<math::ExpOp>(op))
        kernelExps.push_back(op);
      else if (isa<vector::TransposeOp>(op))
        kernelTransposes.push_back(op);
    });
    // The query packs' transposes as shuffles, not per-element moves.
    if (failed(lowerTransposesToShuffles(&getContext(), kernelTransposes)))
      return signalPassFailure();
    // The kernels' vector exponentials as polynomials: LLVM would scalarize
    // them into expf calls otherwise.
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
      return name == "exp" || name == math::ExpOp::getOperationName();
    });
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    if (failed(
            applyOpPatternsGreedily(kernelExps, std::move(patterns), config)))
      signalPassFailure();
  }
};
} // namespace
