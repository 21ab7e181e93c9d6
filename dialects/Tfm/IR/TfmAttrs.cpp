//===- TfmAttrs.cpp - Attributes of the tfm dialect -----------------------===//
//
// The verifiers hold the rules every reader of a signature relied on when it
// was a dictionary: what may be a dimension, which element types the header
// can spell, that the status codes are non-zero.
//
//===----------------------------------------------------------------------===//
#include "dialects/Tfm/IR/TfmDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tfm;

#include "dialects/Tfm/IR/TfmEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/Tfm/IR/TfmAttrs.cpp.inc"

void TfmDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/Tfm/IR/TfmAttrs.cpp.inc"
      >();
}

StringRef TensorSpecAttr::dtypeName(Type t) {
  if (t.isF32())
    return "f32";
  if (t.isF64())
    return "f64";
  if (t.isInteger(64))
    return "i64";
  if (t.isInteger(32))
    return "i32";
  if (t.isInteger(1))
    return "bool";
  if (t.isBF16())
    return "bf16";
  if (t.isF16())
    return "f16";
  if (t.isInteger(8))
    return "i8";
  return "";
}

LogicalResult
TensorSpecAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       StringAttr name, Type elementType, ArrayAttr shape,
                       bool cache) {
  if (!name || name.getValue().empty())
    return emitError() << "a signature tensor needs a name";
  if (dtypeName(elementType).empty())
    return emitError() << "signature tensor '" << name.getValue()
                       << "' has the element type " << elementType
                       << "; expected f32, f64, bf16, f16, i8, i32, i64 or "
                          "i1";
  for (Attribute d : shape) {
    if (auto size = dyn_cast<IntegerAttr>(d)) {
      if (size.getInt() < 0)
        return emitError() << "signature tensor '" << name.getValue()
                           << "' has the negative dimension " << size.getInt();
      continue;
    }
    auto symbol = dyn_cast<StringAttr>(d);
    if (!symbol || symbol.getValue().empty())
      return emitError() << "signature tensor '" << name.getValue()
                         << "': a dimension is a size or a symbol name, not "
                         << d;
  }
  return success();
}

LogicalResult
SignatureErrorAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                           int64_t code, StringAttr message) {
  if (code == 0)
    return emitError() << "status code 0 means success; a signature error "
                          "needs a non-zero code";
  if (!message)
    return emitError() << "a signature error needs a message";
  return success();
}

LogicalResult
SignatureAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      StringAttr model, ArrayAttr symbols, ArrayAttr inputs,
                      ArrayAttr outputs, ArrayAttr errors, StringAttr device) {
  if (!model || model.getValue().empty())
    return emitError() << "a signature needs a model name";
  llvm::StringSet<> declared;
  for (Attribute s : symbols) {
    auto symbol = dyn_cast<StringAttr>(s);
    if (!symbol)
      return emitError() << "signature symbols are strings, not " << s;
    if (!declared.insert(symbol.getValue()).second)
      return emitError() << "signature symbol '" << symbol.getValue()
                         << "' is declared twice";
  }
  llvm::StringSet<> names;
  auto checkTensors = [&](ArrayAttr list, StringRef what) -> LogicalResult {
    for (Attribute a : list) {
      auto tensor = dyn_cast<TensorSpecAttr>(a);
      if (!tensor)
        return emitError() << "signature " << what
                           << " are #tfm.tensor attributes, not " << a;
      if (!names.insert(tensor.getName().getValue()).second)
        return emitError() << "signature tensor '"
                           << tensor.getName().getValue() << "' is named twice";
      for (Attribute d : tensor.getShape())
        if (auto symbol = dyn_cast<StringAttr>(d);
            symbol && !declared.contains(symbol.getValue()))
          return emitError()
                 << "dimension '" << symbol.getValue() << "' of '"
                 << tensor.getName().getValue() << "' is not a declared symbol";
      if (tensor.getCache() && what == "outputs")
        return emitError() << "output '" << tensor.getName().getValue()
                           << "' cannot be a cache; caches are inputs";
    }
    return success();
  };
  if (failed(checkTensors(inputs, "inputs")) ||
      failed(checkTensors(outputs, "outputs")))
    return failure();
  if (errors) {
    llvm::SmallDenseSet<int64_t> codes;
    for (Attribute a : errors) {
      auto error = dyn_cast<SignatureErrorAttr>(a);
      if (!error)
        return emitError() << "signature errors are #tfm.error attributes, "
                              "not "
                           << a;
      if (!codes.insert(error.getCode()).second)
        return emitError() << "status code " << error.getCode()
                           << " is listed twice";
    }
  }
  if (device && device.getValue() != "cuda")
    return emitError() << "signature device must be \"cuda\", not " << device;
  return success();
}

SignatureAttr SignatureAttr::withModel(StringRef name) const {
  return get(getContext(), StringAttr::get(getContext(), name), getSymbols(),
             getInputs(), getOutputs(), getErrors(), getDevice());
}

SignatureAttr SignatureAttr::withDevice(StringRef name) const {
  return get(getContext(), getModel(), getSymbols(), getInputs(), getOutputs(),
             getErrors(),
             name.empty() ? StringAttr() : StringAttr::get(getContext(), name));
}

SignatureAttr mlir::tfm::getSignatureAttr(Operation *op) {
  return op->getAttrOfType<SignatureAttr>(
      TfmDialect::SignatureAttrHelper::getNameStr());
}

void mlir::tfm::setSignatureAttr(Operation *op, SignatureAttr signature) {
  op->setAttr(TfmDialect::SignatureAttrHelper::getNameStr(), signature);
}

bool mlir::tfm::isTaskFunction(Operation *op) {
  return op->hasAttrOfType<UnitAttr>(TfmDialect::TaskAttrHelper::getNameStr());
}

void mlir::tfm::setTaskFunction(Operation *op) {
  op->setAttr(TfmDialect::TaskAttrHelper::getNameStr(),
              UnitAttr::get(op->getContext()));
}

bool mlir::tfm::isExecThreadsFunction(Operation *op) {
  return op->hasAttrOfType<UnitAttr>(
      TfmDialect::ExecThreadsAttrHelper::getNameStr());
}

void mlir::tfm::setExecThreadsFunction(Operation *op) {
  op->setAttr(TfmDialect::ExecThreadsAttrHelper::getNameStr(),
              UnitAttr::get(op->getContext()));
}
