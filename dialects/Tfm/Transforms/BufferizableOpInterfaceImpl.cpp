//===- BufferizableOpInterfaceImpl.cpp - Bufferizing tfm ops --------------===//
#include "dialects/Tfm/Transforms/BufferizableOpInterfaceImpl.h"
#include "dialects/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/IR/DstBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::bufferization;

namespace {
/// A new identity-layout buffer of `buffer`'s shape.
FailureOr<Value> allocateContiguous(RewriterBase &rewriter, Location loc,
                                    Value buffer,
                                    const BufferizationOptions &options) {
  auto type = cast<MemRefType>(buffer.getType());
  SmallVector<Value> dynamicSizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      dynamicSizes.push_back(memref::DimOp::create(rewriter, loc, buffer, d));
  return options.createAlloc(
      rewriter, loc,
      MemRefType::get(type.getShape(), type.getElementType(),
                      MemRefLayoutAttrInterface{}, type.getMemorySpace()),
      dynamicSizes);
}

/// The buffers of all of `op`'s operands, in order.
FailureOr<SmallVector<Value>>
getOperandBuffers(Operation *op, RewriterBase &rewriter,
                  const BufferizationOptions &options,
                  BufferizationState &state) {
  SmallVector<Value> buffers;
  for (OpOperand &operand : op->getOpOperands()) {
    FailureOr<Value> buffer =
        getBuffer(rewriter, operand.get(), options, state);
    if (failed(buffer))
      return failure();
    buffers.push_back(*buffer);
  }
  return buffers;
}

/// Whether the CPU kernel of `op` reads operand `operandNumber` in place when
/// it bufferizes to `type`. The attention kernel addresses its operands
/// through their strides (a head split read as a transposed view, one layer
/// of a cache) as long as the head dim is contiguous, and its mask through
/// any strides; the GEMM (convert-linear-to-cpu) reads matrices through a
/// row stride and indexes its packed weight directly, so it only needs the
/// last dim contiguous, and a leading dim it cannot collapse only in
/// matrices.
bool kernelReadsInPlace(tfm::AttentionOp op, unsigned operandNumber,
                        MemRefType type) {
  if (op.getMask() &&
      operandNumber == op.getMaskMutable()[0].getOperandNumber())
    return type.isStrided();
  return tfm::hasContiguousRows(type);
}

bool kernelReadsInPlace(tfm::PackedLinearOp op, unsigned operandNumber,
                        MemRefType type) {
  return tfm::isGemmReadable(
      type, operandNumber == op.getPackedWeightMutable().getOperandNumber());
}

/// Destination-style tfm ops bufferize the same way: the same op over the
/// operands' buffers, writing the init buffer, with no results. An operand
/// that bufferizes to a view the op's kernel cannot read in place (a strided
/// view for attention, one whose rows are not contiguous for the GEMM) is
/// copied into a contiguous buffer first, and such an init gets a contiguous
/// one that is copied into it afterwards.
template <typename OpTy>
struct DpsOpInterface
    : DstBufferizableOpInterfaceExternalModel<DpsOpInterface<OpTy>, OpTy> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto dps = cast<OpTy>(op);
    if (dps.hasPureBufferSemantics())
      return success();
    Location loc = op->getLoc();
    FailureOr<SmallVector<Value>> operandBuffers =
        getOperandBuffers(op, rewriter, options, state);
    if (failed(operandBuffers))
      return failure();
    SmallVector<Value> &buffers = *operandBuffers;
    Value init = buffers.back();
    rewriter.setInsertionPoint(op);
    for (unsigned operandNumber = 0; operandNumber < buffers.size();
         ++operandNumber) {
      Value &buffer = buffers[operandNumber];
      if (kernelReadsInPlace(dps, operandNumber,
                             cast<MemRefType>(buffer.getType())))
        continue;
      FailureOr<Value> contiguous =
          allocateContiguous(rewriter, loc, buffer, options);
      if (failed(contiguous))
        return failure();
      // The init is only written, so its old contents need no copy.
      if (&buffer != &buffers.back() &&
          failed(options.createMemCpy(rewriter, loc, buffer, *contiguous)))
        return failure();
      buffer = *contiguous;
    }
    OperationState bufferized(loc, op->getName(), buffers, TypeRange{},
                              op->getAttrs());
    rewriter.create(bufferized);
    if (buffers.back() != init &&
        failed(options.createMemCpy(rewriter, loc, buffers.back(), init)))
      return failure();
    replaceOpWithBufferizedValues(rewriter, op, init);
    return success();
  }
};

/// tfm.cache_append writes its cache operand in place: the updated cache is
/// the cache's buffer, which for a model's `cache` argument is the caller's
/// memory. It reads the cache too (the rows it keeps), so that a copy, where
/// analysis needs one, keeps them.
struct CacheAppendOpInterface
    : BufferizableOpInterface::ExternalModel<CacheAppendOpInterface,
                                             tfm::CacheAppendOp> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return true;
  }
  bool bufferizesToMemoryWrite(Operation *op, OpOperand &operand,
                               const AnalysisState &) const {
    return &operand == &cast<tfm::CacheAppendOp>(op).getCacheMutable();
  }
  AliasingValueList getAliasingValues(Operation *op, OpOperand &operand,
                                      const AnalysisState &) const {
    auto append = cast<tfm::CacheAppendOp>(op);
    if (&operand != &append.getCacheMutable())
      return {};
    return {{append.getResult(), BufferRelation::Equivalent}};
  }
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto append = cast<tfm::CacheAppendOp>(op);
    if (append.hasPureBufferSemantics())
      return success();
    FailureOr<SmallVector<Value>> operandBuffers =
        getOperandBuffers(op, rewriter, options, state);
    if (failed(operandBuffers))
      return failure();
    SmallVector<Value> &buffers = *operandBuffers;
    rewriter.setInsertionPoint(op);
    auto bufferized = tfm::CacheAppendOp::create(
        rewriter, op->getLoc(), /*result=*/Type(), rewriter.getI32Type(),
        buffers[0], buffers[1], buffers[2], append.getDimAttr(),
        append.getCodeAttr());
    replaceOpWithBufferizedValues(rewriter, op,
                                  {buffers[2], bufferized.getStatus()});
    return success();
  }
};
} // namespace

void mlir::tfm::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, TfmDialect *) {
    AttentionOp::attachInterface<DpsOpInterface<AttentionOp>>(*ctx);
    PackedLinearOp::attachInterface<DpsOpInterface<PackedLinearOp>>(*ctx);
    CacheAppendOp::attachInterface<CacheAppendOpInterface>(*ctx);
  });
}
