//===- LinearToCPU.cpp - Register-tiled GEMM for tfm.packed_linear --------===//
//
// Lowers bufferized tfm.packed_linear to a cache-blocked GEMM whose leaf is a
// register-tiled vector micro-kernel (GemmKernel.cpp), split into tasks for
// the caller's threads. Each op becomes a call of a task over (row block,
// column block) pairs, sized here by the caller's thread count; the task is
// emitted per CPU variant, and for bf16 and i8 weights (per column or in
// GGUF Q8_0 blocks) also with the variant that has the element type's dot
// product (AVX512-BF16, VNNI), and for bf16 and per-column i8 with AMX
// tiles.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/Common/IndexArith.h"
#include "compiler/Conversion/KernelVariants/KernelVariants.h"
#include "compiler/Conversion/LinearToCPU/GemmKernel.h"
#include "compiler/Conversion/Passes.h"
#include "compiler/Transforms/TaskFunctions.h"
#include "dialects/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace mlir::tfm {
#define GEN_PASS_DEF_CONVERTLINEARTOCPU
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {
/// Rows the AMX GEMM computes at once (2 x 2 C tiles of 16).
constexpr int64_t kAmxGroupRows = 32;

/// N of a GEMM: a constant, or read from the output buffer at `b`'s
/// insertion point.
Value gemmColumns(OpBuilder &b, Location loc, Value output) {
  auto type = cast<MemRefType>(output.getType());
  int64_t n = type.getShape().back();
  if (!ShapedType::isDynamic(n))
    return arith::ConstantIndexOp::create(b, loc, n);
  return memref::DimOp::create(b, loc, output, type.getRank() - 1);
}

/// Emits the call of a GEMM's task: how many (row block, column block)
/// tasks there are and how wide.
class GemmCallEmitter : mlir::tfm::IndexArith<GemmCallEmitter> {
  friend class mlir::tfm::IndexArith<GemmCallEmitter>;

public:
  GemmCallEmitter(OpBuilder &b, Location loc) : b(b), loc(loc) {}
  /// `amxLevel`: the CPU level of the task's AMX variant, 0 without one.
  void emit(PackedLinearOp op, const GemmTiling &partition, int64_t panelWidth,
            int64_t amxLevel, func::FuncOp task);

private:
  OpBuilder &b;
  Location loc;
};

/// A key for the task of `op`: ops of equal operand types and epilogues
/// share one.
std::string taskKey(PackedLinearOp op) {
  std::string key;
  llvm::raw_string_ostream os(key);
  for (Value v : op->getOperands())
    os << v.getType() << ";";
  os << stringifyActivation(op.getActivation()) << ";" << (op.getBias() ? 1 : 0)
     << (op.getResidual() ? 1 : 0);
  return key;
}

/// Tasks come from the `partition` tiling (the widest variant's, whose
/// row blocks every variant's micro-kernels cover), so that the model's
/// glue is the same whichever variant runs.
void GemmCallEmitter::emit(PackedLinearOp op, const GemmTiling &partition,
                           int64_t panelWidth, int64_t amxLevel,
                           func::FuncOp task) {
  // Tasks are (row block, column block) pairs, row-major. Every task
  // streams its row block's A and its column block's packed B from memory
  // (or L3): A once per column block, B once per row block. So there are as
  // few tasks as the caller's threads allow, as wide as possible, their
  // count a multiple of the threads; the rows are split evenly. On one
  // thread BERT's 512 x 3072 -> 768 projection gets 2 full-width tasks
  // instead of 16 (A was read 8 times): 17% faster.
  Value input = op.getInput();
  auto inputType = cast<MemRefType>(input.getType());
  Value rows = idx(1);
  for (int64_t d = 0; d + 1 < inputType.getRank(); ++d)
    rows = mul(rows, memref::DimOp::create(b, loc, input, d));
  Value panels = ceilDiv(gemmColumns(b, loc, op.getInit()), idx(panelWidth));
  Value threads =
      createExecThreadsQuery(b, loc, op->getParentOfType<ModuleOp>());
  Value minRowBlocks = ceilDiv(rows, idx(partition.blockRows));
  // A task's row groups each sweep the K chunk of all its panels, which
  // should stay in L2 between groups: at most 512 KB of them.
  int64_t packedBytes = cast<MemRefType>(op.getPackedWeight().getType())
                            .getElementTypeBitWidth() /
                        8;
  int64_t maxPanels = std::max<int64_t>(
      1, (512 << 10) / (partition.blockK * panelWidth * packedBytes));
  Value maxPanelsValue = idx(maxPanels);
  Value runsAmx;
  if (amxLevel) {
    // The AMX variant converts the task's rows of A to bf16 (or u8) once per
    // column block, and streams a column block's weights once per group of
    // rows (all of K: a panel is 48 KB at K = 768) or per K chunk of them,
    // so its column blocks are wider: up to 6 MB of packed weights (BERT's
    // 768 -> 3072 feed-forward, 4.5 MB in bf16: one column block rather
    // than three, measured 1.05x faster at 128 and 512 rows). Whether the
    // AMX variant runs is known at run time only.
    int64_t panelBytes =
        panelWidth * 4 *
        cast<MemRefType>(op.getPackedWeight().getType()).getShape()[1];
    int64_t amxPanels = std::max<int64_t>(maxPanels, (6 << 20) / panelBytes);
    runsAmx = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::sge,
        emitCpuLevel(b, loc, op->getParentOfType<ModuleOp>()),
        arith::ConstantIntOp::create(b, loc, b.getI32Type(), amxLevel));
    maxPanelsValue = arith::SelectOp::create(b, loc, runsAmx, idx(amxPanels),
                                             maxPanelsValue);
  }
  Value columnSplit = max(
      ceilDiv(panels, maxPanelsValue),
      max(idx(1), min(panels, ceilDiv(threads, max(minRowBlocks, idx(1))))));
  // With one row block (short sequences, decode) the columns alone make
  // the tasks: a multiple of the threads, rather than rows split into
  // uneven micro-kernel counts.
  Value oneRowBlock = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle,
                                            minRowBlocks, idx(1));
  columnSplit = arith::SelectOp::create(
      b, loc, oneRowBlock,
      min(panels, mul(ceilDiv(columnSplit, threads), threads)), columnSplit);
  columnSplit = max(columnSplit, idx(1));
  Value rowSplit = max(minRowBlocks, ceilDiv(threads, columnSplit));
  // The AMX variant computes 32 rows at a time, and a row block's last rows
  // short of 32 in a pass of 16-row tiles over all of K of their own: its
  // row blocks are whole groups of 32 (512 rows: 256 + 256 rather than
  // 264 + 248, 16 groups' work rather than 16.5; 1.03x faster at BERT's
  // S = 512).
  Value rowAlign = idx(partition.microRows);
  if (amxLevel)
    rowAlign =
        arith::SelectOp::create(b, loc, runsAmx, idx(kAmxGroupRows), rowAlign);
  rowSplit = ceilDiv(mul(ceilDiv(mul(rowSplit, columnSplit), threads), threads),
                     columnSplit);
  Value blockRows = mul(ceilDiv(ceilDiv(rows, rowSplit), rowAlign), rowAlign);
  // At most the partition's row block, which tasks size their per-row
  // scratch by (the rows split evenly never exceed it).
  blockRows =
      min(max(blockRows, idx(partition.microRows)), idx(partition.blockRows));
  Value rowBlocks = ceilDiv(rows, blockRows);
  Value panelsPerTask = max(idx(1), ceilDiv(panels, columnSplit));
  Value columnBlocks = ceilDiv(panels, panelsPerTask);
  SmallVector<Value> args(op->getOperands());
  args.append({panelsPerTask, blockRows, idx(0), mul(rowBlocks, columnBlocks)});
  func::CallOp::create(b, loc, task, args);
}

struct ConvertLinearToCPUPass
    : tfm::impl::ConvertLinearToCPUBase<ConvertLinearToCPUPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<PackedLinearOp> ops;
    module.walk([&](PackedLinearOp op) { ops.push_back(op); });
    llvm::StringMap<func::FuncOp> tasks;
    SmallVector<func::FuncOp> bodies;
    for (PackedLinearOp op : ops) {
      if (!op.hasPureBufferSemantics()) {
        op.emitOpError("must be bufferized before convert-linear-to-cpu");
        return signalPassFailure();
      }
      for (Value operand : op->getOperands())
        if (!isGemmReadable(cast<MemRefType>(operand.getType()),
                            operand == op.getPackedWeight())) {
          op.emitOpError("needs contiguous buffers to lower to CPU");
          return signalPassFailure();
        }
      Type packedType =
          cast<MemRefType>(op.getPackedWeight().getType()).getElementType();
      DotProduct dotProduct = packedType.isBF16()       ? DotProduct::BF16
                              : packedType.isInteger(8) ? DotProduct::Int8
                                                        : DotProduct::FMA;
      SmallVector<KernelVariant> variants =
          getKernelVariants(vectorBits, multiversion, dotProduct,
                            TargetDotProducts{targetBF16Dot, targetInt8Dot},
                            /*amx=*/multiversion && gemmSupportsAmx(op));
      int64_t panelWidth = op.getPanelWidth();
      int64_t packedBytes = packedType.getIntOrFloatBitWidth() / 8;
      // Block-quantized i8 keeps a block's i32 sums beside the f32
      // accumulators: half the rows keep both in registers; its chunks are
      // whole blocks.
      int64_t weightBlock = op.getWeightBlock();
      auto tilingOf = [&](const KernelVariant &variant) {
        int64_t rows = microRows;
        if (weightBlock && rows <= 0)
          rows = variant.vectorBits >= 512 ? 6 : 3;
        int64_t depth = blockK;
        // Whole blocks, and whole groups of 32 k: the 5- and 6-bit types'
        // bit planes hold 32 k a row (Q6_K's blocks are 16).
        if (weightBlock && depth > 0)
          depth = llvm::alignTo(depth, std::max<int64_t>(weightBlock, 32));
        return getGemmTiling(variant.vectorBits, panelWidth, packedBytes, rows,
                             depth);
      };
      // Tasks are cut by the widest variant's tiling, whose row blocks the
      // others' micro-kernels cover too.
      GemmTiling partition = tilingOf(variants.back());
      func::FuncOp task = tasks.lookup(taskKey(op));
      if (!task) {
        SmallVector<Type> types(op->getOperandTypes());
        types.append(4, IndexType::get(&getContext()));
        OpBuilder before(op->getParentOfType<func::FuncOp>());
        FailureOr<func::FuncOp> created = createMultiversionTask(
            before, op.getLoc(), "__tfm_task_linear_", types, variants,
            [&](const KernelVariant &variant, func::FuncOp body) {
              emitGemmTaskBody(op, tilingOf(variant), variant,
                               partition.blockRows, body);
              bodies.push_back(body);
              return success();
            });
        if (failed(created))
          return signalPassFailure();
        task = *created;
        tasks[taskKey(op)] = task;
      }
      OpBuilder b(op);
      int64_t amxLevel = variants.back().amx ? variants.back().level : 0;
      GemmCallEmitter(b, op.getLoc())
          .emit(op, partition, panelWidth, amxLevel, task);
      op.erase();
    }
    // Activations as polynomials on vectors, in the tasks alone: LLVM would
    // scalarize them into libm calls otherwise.
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
      return name == "erf" || name == "tanh" ||
             name == math::ErfOp::getOperationName() ||
             name == math::TanhOp::getOperationName();
    });
    FrozenRewritePatternSet frozen(std::move(patterns));
    for (func::FuncOp body : bodies)
      if (failed(applyPatternsGreedily(body, frozen)))
        return signalPassFailure();
  }
};
} // namespace
