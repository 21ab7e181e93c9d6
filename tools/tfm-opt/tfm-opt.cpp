//===- tfm-opt.cpp - The mlir-opt of tfm ----------------------------------===//
//
// Every upstream dialect and pass, plus tfm's dialect, passes and named
// pipelines: the driver of the lit tests and a tool to look at the IR.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/AttentionToGPU/TestPasses.h"
#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Registration/Registration.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::tfm::registerAllPassesAndPipelines();
  mlir::tfm::registerTestGPUPasses();

  mlir::DialectRegistry registry;
  mlir::tfm::registerAllDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "tfm optimizer driver\n", registry));
}
