//===- ResultsToOutParams.cpp - Model results into caller memory ----------===//
#include "compiler/Transforms/Passes.h"
#include "dialects/Tfm/IR/TfmDialect.h"

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
      if (!tfm::hasSignature(func) || func.isExternal())
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

  /// A cache is returned after the outputs so that, on tensors, the model
  /// says that it updates it. Bufferized in place, the returned buffer is
  /// the cache's argument: the caller's memory was written, and the result
  /// goes away. Anything else would lose the update.
  LogicalResult dropCacheResults(func::FuncOp func) {
    tfm::SignatureAttr signature = tfm::getSignatureAttr(func);
    SmallVector<std::pair<unsigned, StringRef>> caches;
    for (auto [i, input] : llvm::enumerate(signature.getInputSpecs()))
      if (input.getCache())
        caches.push_back({unsigned(i), input.getName().getValue()});
    if (caches.empty())
      return success();
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    size_t first = signature.getOutputs().size();
    if (ret.getNumOperands() < first + caches.size())
      return func.emitError("expected the model to return its caches after "
                            "its outputs");
    SmallVector<unsigned> drop;
    size_t next = first;
    for (auto [argument, name] : caches) {
      Value value = ret.getOperand(next);
      while (auto cast = value.getDefiningOp<memref::CastOp>())
        value = cast.getSource();
      if (argument >= func.getNumArguments() ||
          value != func.getArgument(argument))
        return ret.emitError("cache '")
               << name
               << "' is not updated in place: it is read after a "
                  "cache_append wrote it, or bufferization copied it";
      drop.push_back(next++);
    }
    llvm::BitVector erase(ret.getNumOperands());
    for (unsigned i : drop)
      erase.set(i);
    ret->eraseOperands(erase);
    if (failed(func.eraseResults(erase)))
      return failure();
    return success();
  }

  LogicalResult convert(func::FuncOp func) {
    if (failed(dropCacheResults(func)))
      return failure();
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
