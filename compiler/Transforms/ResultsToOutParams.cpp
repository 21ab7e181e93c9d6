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

  LogicalResult convert(func::FuncOp func) {
    FunctionType type = func.getFunctionType();
    for (Type t : type.getResults())
      if (!isa<MemRefType>(t))
        return func.emitError("model results must be memrefs after "
                              "bufferization, got ")
               << t;
    if (!func.getBody().hasOneBlock())
      return func.emitError("expected a single-block model function");
    Block &body = func.getBody().front();
    SmallVector<BlockArgument> outs;
    for (Type t : type.getResults())
      outs.push_back(body.addArgument(t, func.getLoc()));
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    OpBuilder b(ret);
    for (auto [value, out] : llvm::zip(ret.getOperands(), outs))
      memref::CopyOp::create(b, ret.getLoc(), value, out);
    func::ReturnOp::create(b, ret.getLoc());
    ret.erase();
    SmallVector<Type> inputs(type.getInputs());
    inputs.append(type.getResults().begin(), type.getResults().end());
    func.setFunctionType(b.getFunctionType(inputs, {}));
    return success();
  }
};
} // namespace
