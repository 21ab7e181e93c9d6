//===- Registration.cpp - The dialects tfm's tools load -------------------===//
#include "compiler/Registration/Registration.h"
#include "dialects/Tfm/IR/TfmDialect.h"
#include "dialects/Tfm/Transforms/BufferizableOpInterfaceImpl.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"

void mlir::tfm::registerAllDialects(DialectRegistry &registry) {
  mlir::registerAllDialects(registry);
  registerAllExtensions(registry);
  registry.insert<TfmDialect>();
  registerBufferizableOpInterfaceExternalModels(registry);
}
