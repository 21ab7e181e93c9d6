//===- TfmDialect.cpp - The tfm dialect -----------------------------------===//
#include "dialects/Tfm/IR/TfmDialect.h"
#include "dialects/Tfm/IR/TfmOps.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::tfm;

#include "dialects/Tfm/IR/TfmDialect.cpp.inc"

void TfmDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/Tfm/IR/TfmOps.cpp.inc"
      >();
  registerAttributes();
}

/// The signature and the task marker describe functions, at every level
/// (func.func, then llvm.func): anywhere else no pass would read them.
LogicalResult TfmDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == SignatureAttrHelper::getNameStr()) {
    if (!isa<SignatureAttr>(attr.getValue()))
      return op->emitError("'")
             << name << "' must be a #tfm.signature, not " << attr.getValue();
  } else if (name == TaskAttrHelper::getNameStr() ||
             name == ExecThreadsAttrHelper::getNameStr()) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError("'") << name << "' must be a unit attribute";
  } else if (name == WorkspaceSizeAttrHelper::getNameStr()) {
    if (!isa<FlatSymbolRefAttr>(attr.getValue()))
      return op->emitError("'") << name << "' must be a symbol reference";
  } else if (llvm::is_contained({"tfm.q8_0_blocks", "tfm.q4_0_blocks",
                                 "tfm.q4_1_blocks", "tfm.q5_0_blocks",
                                 "tfm.q5_1_blocks", "tfm.q4_k_blocks",
                                 "tfm.q5_k_blocks", "tfm.q6_k_blocks"},
                                name)) {
    // The GGUF blocks a constant weight was dequantized from
    // (tfm-bind-weights), for tfm-pack-linear to pack as they are.
    auto blocks = dyn_cast<ElementsAttr>(attr.getValue());
    if (!blocks || blocks.getShapedType().getRank() != 1 ||
        !blocks.getElementType().isInteger(8) || op->getNumResults() != 1)
      return op->emitError("'")
             << name << "' must be bytes (a 1-D i8 elements attribute) on a "
             << "constant";
    return success();
  } else {
    return op->emitError("unknown tfm attribute '") << name << "'";
  }
  if (!isa<FunctionOpInterface>(op))
    return op->emitError("'") << name << "' only applies to functions";
  return success();
}
