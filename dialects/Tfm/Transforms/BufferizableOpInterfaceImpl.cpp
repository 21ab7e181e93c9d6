//===- BufferizableOpInterfaceImpl.cpp - Bufferizing tfm ops --------------===//
#include "dialects/Tfm/Transforms/BufferizableOpInterfaceImpl.h"
#include "dialects/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/IR/DstBufferizableOpInterfaceImpl.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::bufferization;

namespace {
/// Destination-style tfm ops bufferize the same way: the same op over the
/// operands' buffers, writing the init buffer, with no results.
template <typename OpTy>
struct DpsOpInterface
    : DstBufferizableOpInterfaceExternalModel<DpsOpInterface<OpTy>, OpTy> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto dps = cast<OpTy>(op);
    if (dps.hasPureBufferSemantics())
      return success();
    SmallVector<Value> buffers;
    for (OpOperand &operand : op->getOpOperands()) {
      FailureOr<Value> buffer =
          getBuffer(rewriter, operand.get(), options, state);
      if (failed(buffer))
        return failure();
      buffers.push_back(*buffer);
    }
    rewriter.setInsertionPoint(op);
    OperationState bufferized(op->getLoc(), op->getName(), buffers,
                              TypeRange{}, op->getAttrs());
    rewriter.create(bufferized);
    replaceOpWithBufferizedValues(rewriter, op, buffers.back());
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
    SmallVector<Value> buffers;
    for (OpOperand &operand : op->getOpOperands()) {
      FailureOr<Value> buffer =
          getBuffer(rewriter, operand.get(), options, state);
      if (failed(buffer))
        return failure();
      buffers.push_back(*buffer);
    }
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
