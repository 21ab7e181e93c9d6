//===- ContractionFusion.cpp - Elementwise ops in a GEMM's kernel ---------===//
//
// On buffers, a fused op must compute what the separate kernels computed,
// in any order of the GEMM's blocks:
//
// - the prologue is the op right before the contraction, a linalg.fill of
//   C or an all-parallel generic writing exactly C (identity map, C's
//   rank) without reading it:
//   C's initial element becomes its payload, evaluated where the GEMM
//   loads C (the contraction overwrites all of C anyway);
// - the epilogue is the op right after, an all-parallel generic over C's
//   dims reading C through the identity map: the payload is evaluated on
//   the accumulated value where the GEMM stores it, and written to the
//   epilogue's output. C itself is then never written, so it must be a
//   temporary nobody else reads (an alloc used only by these ops and its
//   dealloc), unless the epilogue writes C back; and the output must not
//   be a buffer the GEMM reads (A, B or the prologue's inputs), since a
//   block would overwrite what another block still reads.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/LinalgToGPU/ContractionFusion.h"
#include "compiler/Conversion/LinalgToGPU/BufferRoot.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::tfm;

namespace {

/// An all-parallel generic with one init written through the identity map
/// over `rank` loops, whose payload is pure.
bool isElementwiseOver(linalg::GenericOp op, int64_t rank) {
  if (!op || !op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumLoops() != rank || op.getNumParallelLoops() != op.getNumLoops())
    return false;
  if (!op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity())
    return false;
  for (Operation &inner : op.getBody()->without_terminator())
    if (!isa<linalg::IndexOp>(inner) && !isPure(&inner))
      return false;
  return true;
}

/// The payload of `op` at loop values `loops`, with `known` block arguments
/// given and the others loaded through their maps. Returns the yielded
/// value.
Value emitPayload(OpBuilder &b, Location loc, linalg::GenericOp op,
                  ArrayRef<Value> loops, IRMapping &known) {
  Block *body = op.getBody();
  for (OpOperand &operand : op->getOpOperands()) {
    BlockArgument arg = body->getArgument(operand.getOperandNumber());
    if (known.contains(arg) || arg.use_empty())
      continue;
    SmallVector<Value> indices;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    for (AffineExpr e : map.getResults())
      indices.push_back(loops[cast<AffineDimExpr>(e).getPosition()]);
    known.map(arg, memref::LoadOp::create(b, loc, operand.get(), indices));
  }
  for (Operation &inner : body->without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      known.map(index.getResult(), loops[index.getDim()]);
      continue;
    }
    b.clone(inner, known);
  }
  return known.lookupOrDefault(body->getTerminator()->getOperand(0));
}

} // namespace

ContractionFusion ContractionFusion::find(linalg::LinalgOp op) {
  ContractionFusion fusion;
  if (op.getNumDpsInits() != 1 || !op.hasPureBufferSemantics())
    return fusion;
  Value c = op.getDpsInitOperand(0)->get();
  fusion.c = c;
  auto cType = dyn_cast<MemRefType>(c.getType());
  if (!cType)
    return fusion;
  int64_t rank = cType.getRank();

  Operation *prevOp = op->getPrevNode();
  auto prev = dyn_cast_or_null<linalg::GenericOp>(prevOp);
  if (isElementwiseOver(prev, rank) && prev.getDpsInits()[0] == c &&
      !prev.payloadUsesValueFromOperand(prev.getDpsInitOperand(0)) &&
      llvm::none_of(prev.getDpsInputs(),
                    [&](Value in) { return bufferRoot(in) == bufferRoot(c); }))
    fusion.init = prev;
  if (auto fill = dyn_cast_or_null<linalg::FillOp>(prevOp);
      fill && fill.hasPureBufferSemantics() && fill.getDpsInits()[0] == c &&
      fill.value().getType() == cType.getElementType())
    fusion.init = fill;

  auto next = dyn_cast_or_null<linalg::GenericOp>(op->getNextNode());
  if (!isElementwiseOver(next, rank))
    return fusion;
  OpOperand *readC = nullptr;
  for (OpOperand *in : next.getDpsInputOperands()) {
    if (bufferRoot(in->get()) != bufferRoot(c))
      continue;
    // C read twice, or through a view or another map: not one element.
    if (readC || in->get() != c ||
        !next.getMatchingIndexingMap(in).isIdentity())
      return fusion;
    readC = in;
  }
  if (!readC)
    return fusion;
  Value out = next.getDpsInits()[0];
  Value outRoot = bufferRoot(out);
  SmallVector<Value> read(op.getDpsInputs());
  if (auto prologue = dyn_cast_or_null<linalg::GenericOp>(fusion.init))
    llvm::append_range(read, prologue.getDpsInputs());
  if (llvm::any_of(read, [&](Value in) { return bufferRoot(in) == outRoot; }))
    return fusion;
  if (out != c) {
    // C is never written: only these ops and its dealloc may see it.
    auto alloc = c.getDefiningOp<memref::AllocOp>();
    if (!alloc)
      return fusion;
    for (Operation *user : c.getUsers())
      if (user != op && user != next && user != fusion.init &&
          !isa<memref::DeallocOp>(user))
        return fusion;
  }
  fusion.after = next;
  return fusion;
}

Value ContractionFusion::emitInitial(OpBuilder &b, Location loc, Value inside,
                                     ArrayRef<Value> out, Type type) const {
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{type}, inside,
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  Value value;
  if (auto fill = dyn_cast_or_null<linalg::FillOp>(init)) {
    value = fill.value();
  } else if (auto prologue = dyn_cast_or_null<linalg::GenericOp>(init)) {
    IRMapping known;
    value = emitPayload(b, loc, prologue, out, known);
  } else {
    value = memref::LoadOp::create(b, loc, c, out);
  }
  if (value.getType() != type)
    value = arith::TruncFOp::create(b, loc, type, value);
  scf::YieldOp::create(b, loc, value);
  b.setInsertionPointToStart(ifOp.elseBlock());
  scf::YieldOp::create(
      b, loc,
      ValueRange{arith::ConstantOp::create(b, loc, b.getZeroAttr(type))});
  return ifOp.getResult(0);
}

void ContractionFusion::emitStore(OpBuilder &b, Location loc, Value value,
                                  ArrayRef<Value> out) const {
  linalg::GenericOp epilogue = after;
  if (!epilogue) {
    memref::StoreOp::create(b, loc, value, c, out);
    return;
  }
  // C's element is the accumulated value, also where the epilogue writes
  // C back and reads its own output.
  IRMapping known;
  for (OpOperand &operand : epilogue->getOpOperands())
    if (operand.get() == c)
      known.map(epilogue.getBody()->getArgument(operand.getOperandNumber()),
                value);
  Value result = emitPayload(b, loc, epilogue, out, known);
  memref::StoreOp::create(b, loc, result, epilogue.getDpsInits()[0], out);
}

void ContractionFusion::eraseFused(RewriterBase &rewriter) const {
  if (init)
    rewriter.eraseOp(init);
  if (after)
    rewriter.eraseOp(after);
}

void ContractionFusion::appendFused(SmallVectorImpl<Operation *> &ops) const {
  if (init)
    ops.push_back(init);
  if (after)
    ops.push_back(after);
}
