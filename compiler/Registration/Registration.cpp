//===- Registration.cpp - The dialects tfm's tools load -------------------===//
#include "compiler/Registration/Registration.h"
#include "dialects/Tfm/IR/TfmDialect.h"
#include "dialects/Tfm/Transforms/BufferizableOpInterfaceImpl.h"
#include "dialects/Tfm/Transforms/TilingInterfaceImpl.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"

void mlir::tfm::registerAllDialects(DialectRegistry &registry) {
  mlir::registerAllDialects(registry);
  registerAllExtensions(registry);
  registry.insert<TfmDialect>();
  registerBufferizableOpInterfaceExternalModels(registry);
  registerTilingInterfaceExternalModels(registry);
  // --target cuda: #nvvm.target serializes kernels (translating them to LLVM
  // IR inside a pass), and gpu.binary with its #gpu.select_object becomes the
  // embedded binary and its loader.
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
}
