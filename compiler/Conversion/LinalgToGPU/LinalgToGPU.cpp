//===- LinalgToGPU.cpp - Each linalg op on buffers as one gpu.launch ------===//
//
// The GPU's reading of tfm-tile-linalg's structure: the rows and the lanes
// of an op's parallel loops become the threads of a grid, one iteration per
// thread, linearized so that neighbouring threads write neighbouring
// elements; what the CPU keeps inside a tile (the reductions) runs in the
// thread.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/LinalgToGPU/MmaContraction.h"
#include "compiler/Conversion/LinalgToGPU/TiledContraction.h"
#include "compiler/Conversion/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_CONVERTLINALGTOGPU
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {

/// The loops linalg's parallel lowering puts in its outermost scf.parallel.
unsigned leadingParallelLoops(linalg::LinalgOp op) {
  unsigned n = 0;
  for (utils::IteratorType type : op.getIteratorTypesArray()) {
    if (type != utils::IteratorType::parallel)
      break;
    ++n;
  }
  return n;
}

/// Replaces the outermost scf.parallel of a lowered op by the thread's
/// iteration `ivs`, and runs the parallel loops nested under a reduction
/// sequentially.
LogicalResult inlineParallelLoop(RewriterBase &rewriter, scf::ParallelOp loop,
                                 ValueRange ivs) {
  if (loop.getNumLoops() != ivs.size() || loop.getNumReductions() != 0)
    return failure();
  Block *body = loop.getBody();
  rewriter.eraseOp(body->getTerminator());
  rewriter.inlineBlockBefore(body, loop, ivs);
  rewriter.eraseOp(loop);
  return success();
}

/// The linalg.fill that last wrote `buffer` before `at`, when every other
/// op that touches `buffer` in between only copies out of it (a fill
/// shared by several reductions, as bufferization leaves it).
linalg::FillOp lastFillBefore(Value buffer, Operation *at) {
  if (!buffer.getDefiningOp<memref::AllocOp>())
    return {};
  linalg::FillOp fill;
  for (Operation *user : buffer.getUsers()) {
    if (user->getBlock() != at->getBlock())
      return {};
    if (user == at || !user->isBeforeInBlock(at))
      continue;
    if (auto f = dyn_cast<linalg::FillOp>(user);
        f && f.getDpsInits()[0] == buffer) {
      if (fill && !fill->isBeforeInBlock(f) && fill != f)
        continue; // an earlier fill
      fill = f;
    }
  }
  if (!fill || !fill.hasPureBufferSemantics())
    return {};
  for (Operation *user : buffer.getUsers()) {
    if (user == fill || user == at || !fill->isBeforeInBlock(user) ||
        !user->isBeforeInBlock(at))
      continue;
    auto copy = dyn_cast<linalg::CopyOp>(user);
    if (!copy || copy.getDpsInputs()[0] != buffer ||
        copy.getDpsInits()[0] == buffer)
      return {};
  }
  return fill;
}

/// The linalg.fill whose constant a reduction's accumulator starts from:
/// the fill that last wrote the accumulator, or, when the op right before
/// is a copy into it, the fill that last wrote the copy's source (a copy
/// then goes: added to `erase`). The launch stores the constant where each
/// thread's rows start. Null when there is none, or the op's output is not
/// owned by the threads (its map must be a projection of the leading
/// parallel loops).
linalg::FillOp reductionStart(linalg::LinalgOp op,
                              SmallVectorImpl<Operation *> &erase) {
  unsigned parallel = leadingParallelLoops(op);
  if (parallel == 0 || parallel == op.getNumLoops() ||
      op.getNumDpsInits() != 1 || !op.hasPureBufferSemantics())
    return {};
  OpOperand *init = op.getDpsInitOperand(0);
  AffineMap map = op.getMatchingIndexingMap(init);
  if (!map.isProjectedPermutation() ||
      llvm::any_of(map.getResults(), [&](AffineExpr e) {
        return cast<AffineDimExpr>(e).getPosition() >= parallel;
      }))
    return {};
  Value acc = init->get();
  Type element = getElementTypeOrSelf(acc.getType());
  auto usable = [&](linalg::FillOp fill) {
    return fill && fill.value().getType() == element;
  };
  if (auto copy = dyn_cast_or_null<linalg::CopyOp>(op->getPrevNode());
      copy && copy.getDpsInits()[0] == acc) {
    linalg::FillOp fill = lastFillBefore(copy.getDpsInputs()[0], copy);
    if (!usable(fill))
      return {};
    erase.push_back(copy);
    return fill;
  }
  linalg::FillOp fill = lastFillBefore(acc, op);
  return usable(fill) ? fill : linalg::FillOp();
}

LogicalResult convertToLaunch(RewriterBase &rewriter, linalg::LinalgOp op,
                              int64_t threads, Value start = Value()) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  unsigned parallel = leadingParallelLoops(op);
  SmallVector<Range> ranges = op.createLoopRanges(rewriter, loc);
  SmallVector<OpFoldResult> extents;
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value total = one;
  for (unsigned i = 0; i < parallel; ++i) {
    extents.push_back(ranges[i].size);
    total = arith::MulIOp::create(
        rewriter, loc, total,
        getValueOrCreateConstantIndexOp(rewriter, loc, ranges[i].size));
  }
  Value blockSize =
      parallel ? arith::ConstantIndexOp::create(rewriter, loc, threads) : one;
  Value grid = parallel
                   ? arith::CeilDivUIOp::create(rewriter, loc, total, blockSize)
                         .getResult()
                   : one;
  auto launch =
      gpu::LaunchOp::create(rewriter, loc, grid, one, one, blockSize, one, one);
  Block &body = launch.getBody().front();
  rewriter.setInsertionPointToEnd(&body);
  Operation *terminator = gpu::TerminatorOp::create(rewriter, loc);
  rewriter.setInsertionPoint(terminator);

  if (parallel == 0) {
    // A reduction to a scalar: one thread runs the whole loop nest.
    auto clone = cast<linalg::LinalgOp>(rewriter.clone(*op));
    if (failed(linalg::linalgOpToLoops(rewriter, clone)))
      return op->emitOpError("cannot be lowered to loops for the GPU");
    rewriter.eraseOp(clone);
    rewriter.eraseOp(op);
    return success();
  }

  Value linear = arith::AddIOp::create(
      rewriter, loc,
      arith::MulIOp::create(rewriter, loc, launch.getBlockIds().x,
                            launch.getBlockSize().x),
      launch.getThreadIds().x);
  Value inRange = arith::CmpIOp::create(
      rewriter, loc, arith::CmpIPredicate::ult, linear, total);
  auto guard = scf::IfOp::create(rewriter, loc, inRange);
  rewriter.setInsertionPoint(guard.thenBlock()->getTerminator());
  auto ivs =
      affine::AffineDelinearizeIndexOp::create(rewriter, loc, linear, extents);
  if (start) {
    // The thread owns its output elements (reductionStart): it starts them.
    OpOperand *init = op.getDpsInitOperand(0);
    SmallVector<Value> at;
    for (AffineExpr e : op.getMatchingIndexingMap(init).getResults())
      at.push_back(ivs.getResult(cast<AffineDimExpr>(e).getPosition()));
    memref::StoreOp::create(rewriter, loc, start, init->get(), at);
  }
  auto clone = cast<linalg::LinalgOp>(rewriter.clone(*op));
  FailureOr<linalg::LinalgLoops> loops =
      linalg::linalgOpToParallelLoops(rewriter, clone);
  if (failed(loops) || loops->empty())
    return op->emitOpError("cannot be lowered to parallel loops for the GPU");
  rewriter.eraseOp(clone);
  auto outer = dyn_cast<scf::ParallelOp>(loops->front());
  if (!outer || failed(inlineParallelLoop(rewriter, outer, ivs.getResults())))
    return op->emitOpError("lowered to an unexpected loop nest for the GPU");
  // Parallel loops under a reduction ([parallel, reduction, parallel]) run
  // in the thread.
  while (true) {
    scf::ParallelOp nested;
    guard.thenBlock()->walk([&](scf::ParallelOp p) {
      nested = p;
      return WalkResult::interrupt();
    });
    if (!nested)
      break;
    if (failed(scf::parallelForToNestedFors(rewriter, nested)))
      return op->emitOpError("has a nested parallel loop the GPU lowering "
                             "cannot run sequentially");
  }
  rewriter.eraseOp(op);
  return success();
}

struct ConvertLinalgToGPUPass
    : tfm::impl::ConvertLinalgToGPUBase<ConvertLinalgToGPUPass> {
  using ConvertLinalgToGPUBase::ConvertLinalgToGPUBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (threads < 1 || threads > 1024) {
      func.emitError("convert-linalg-to-gpu: threads must be in [1, 1024]");
      return signalPassFailure();
    }
    Type mmaType;
    if (mma == "f16")
      mmaType = Float16Type::get(&getContext());
    else if (mma == "bf16")
      mmaType = BFloat16Type::get(&getContext());
    else if (!mma.empty()) {
      func.emitError("convert-linalg-to-gpu: mma must be f16, bf16 or empty, "
                     "not '")
          << mma << "'";
      return signalPassFailure();
    }
    IRRewriter rewriter(&getContext());
    // Copies get the same kernel as every other op.
    SmallVector<memref::CopyOp> copies;
    func.walk([&](memref::CopyOp copy) { copies.push_back(copy); });
    for (memref::CopyOp copy : copies) {
      rewriter.setInsertionPoint(copy);
      linalg::CopyOp::create(rewriter, copy.getLoc(),
                             ValueRange{copy.getSource()},
                             ValueRange{copy.getTarget()});
      rewriter.eraseOp(copy);
    }
    SmallVector<linalg::LinalgOp> ops;
    bool unsupported = false;
    func.walk([&](Operation *op) {
      if (op->getParentOfType<gpu::LaunchOp>())
        return;
      if (op->getDialect() && op->getDialect()->getNamespace() == "tfm") {
        op->emitOpError("has no GPU lowering yet (docs/gpu.md)");
        unsupported = true;
      }
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
        if (!linalgOp.hasPureBufferSemantics()) {
          op->emitOpError("must be bufferized before convert-linalg-to-gpu");
          unsupported = true;
        }
        ops.push_back(linalgOp);
      }
    });
    if (unsupported)
      return signalPassFailure();
    // The GEMMs first: they take the elementwise ops around them into their
    // kernels (ContractionFusion), which then get no launch of their own.
    llvm::DenseSet<Operation *> done;
    for (linalg::LinalgOp op : ops) {
      if (!linalg::isaContractionOpInterface(op))
        continue;
      SmallVector<Operation *> fused;
      FailureOr<bool> gemm = false;
      if (mmaType)
        gemm = tfm::convertToMmaContraction(rewriter, op, mmaType, fused);
      // With tensor cores on, the contractions they leave (fewer than 16
      // static columns) are small: they keep the simple kernel, so that
      // every tiled GEMM of such a build is a tensor-core one.
      else if (gemmThreadsM > 0 && gemmThreadsN > 0)
        gemm = tfm::convertToTiledContraction(rewriter, op, gemmThreadsM,
                                              gemmThreadsN, fused);
      if (failed(gemm))
        return signalPassFailure();
      if (*gemm)
        done.insert(op);
      done.insert(fused.begin(), fused.end());
    }
    // Reductions start from the constant their accumulator was filled
    // with, in their own kernel: the copies of a shared fill go, and so
    // does the fill once only such reductions and deallocs see its buffer.
    llvm::DenseMap<Operation *, Value> starts;
    llvm::DenseMap<Operation *, Operation *> startFills;
    for (linalg::LinalgOp op : ops) {
      if (done.contains(op))
        continue;
      SmallVector<Operation *> erase;
      if (linalg::FillOp fill = reductionStart(op, erase)) {
        starts[op] = fill.value();
        startFills[op] = fill;
        for (Operation *e : erase) {
          done.insert(e);
          rewriter.eraseOp(e);
        }
      }
    }
    for (linalg::LinalgOp op : ops) {
      if (done.contains(op))
        continue;
      auto fill = dyn_cast<linalg::FillOp>(op.getOperation());
      if (!fill)
        continue;
      // Past a reduction that restarts the buffer itself, its readers read
      // that reduction's result, not the fill's.
      Value buffer = fill.getDpsInits()[0];
      Operation *overwrite = nullptr;
      for (Operation *user : buffer.getUsers())
        if (startFills.lookup(user) == fill.getOperation() &&
            cast<linalg::LinalgOp>(user).getDpsInits()[0] == buffer &&
            (!overwrite || user->isBeforeInBlock(overwrite)))
          overwrite = user;
      bool dead = llvm::all_of(buffer.getUsers(), [&](Operation *user) {
        return user == fill || isa<memref::DeallocOp>(user) ||
               startFills.lookup(user) == fill.getOperation() ||
               (overwrite && user->getBlock() == overwrite->getBlock() &&
                overwrite->isBeforeInBlock(user));
      });
      if (dead && buffer.getDefiningOp<memref::AllocOp>()) {
        done.insert(fill);
        rewriter.eraseOp(fill);
      }
    }
    for (linalg::LinalgOp op : ops) {
      if (done.contains(op))
        continue;
      if (failed(convertToLaunch(rewriter, op, threads, starts.lookup(op))))
        return signalPassFailure();
    }
  }
};

} // namespace
