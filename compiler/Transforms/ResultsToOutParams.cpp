//===- ResultsToOutParams.cpp - Model results into caller memory ----------===//
#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMRESULTSTOOUTPARAMS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {
struct TfmResultsToOutParamsPass
    : tfm::impl::TfmResultsToOutParamsBase<TfmResultsToOutParamsPass> {
  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp func) {
      if (!func->hasAttr("tfm.signature") || func.isExternal())
        return;
      if (failed(convert(func)))
        signalPassFailure();
    });
  }

  /// Whether `value`, returned by `ret`, is a fresh allocation of `dest`'s
  /// type returned once, so its uses can write `dest` directly.
  static bool canComputeInPlace(Value value, func::ReturnOp ret,
                                BlockArgument dest) {
    auto alloc = value.getDefiningOp<memref::AllocOp>();
    if (!alloc || value.getType() != dest.getType() ||
        alloc->getBlock() != ret->getBlock())
      return false;
    return llvm::count(ret.getOperands(), value) == 1 &&
           llvm::none_of(value.getUsers(), [](Operation *user) {
             return isa<memref::DeallocOp>(user);
           });
  }

  LogicalResult convert(func::FuncOp func) {
    FunctionType type = func.getFunctionType();
    // Tensors are memrefs now; the one scalar a model may return is its i32
    // status (docs/artifact.md), which stays a result.
    SmallVector<Type> outTypes, kept;
    for (Type t : type.getResults()) {
      if (isa<MemRefType>(t))
        outTypes.push_back(t);
      else if (t.isInteger(32))
        kept.push_back(t);
      else
        return func.emitError("model results must be memrefs after "
                              "bufferization (or its i32 status), got ")
               << t;
    }
    if (kept.size() > 1)
      return func.emitError("a model returns at most one i32 status");
    if (!func.getBody().hasOneBlock())
      return func.emitError("expected a single-block model function");
    Block &body = func.getBody().front();
    SmallVector<BlockArgument> outs;
    for (Type t : outTypes)
      outs.push_back(body.addArgument(t, func.getLoc()));
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    OpBuilder b(ret);
    SmallVector<Value> status;
    auto out = outs.begin();
    for (Value value : ret.getOperands()) {
      if (!isa<MemRefType>(value.getType())) {
        status.push_back(value);
        continue;
      }
      BlockArgument dest = *out++;
      // A result the function allocated itself is computed in the caller's
      // buffer instead: no output-sized temporary, no copy.
      if (canComputeInPlace(value, ret, dest)) {
        Operation *alloc = value.getDefiningOp();
        value.replaceAllUsesWith(dest);
        alloc->erase();
        continue;
      }
      memref::CopyOp::create(b, ret.getLoc(), value, dest);
    }
    func::ReturnOp::create(b, ret.getLoc(), status);
    ret.erase();
    SmallVector<Type> inputs(type.getInputs());
    inputs.append(outTypes.begin(), outTypes.end());
    func.setFunctionType(b.getFunctionType(inputs, kept));
    return success();
  }
};
} // namespace
