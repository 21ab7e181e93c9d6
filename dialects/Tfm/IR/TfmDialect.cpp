//===- TfmDialect.cpp - The tfm dialect -----------------------------------===//
#include "dialects/Tfm/IR/TfmDialect.h"
#include "dialects/Tfm/IR/TfmOps.h"

using namespace mlir;
using namespace mlir::tfm;

#include "dialects/Tfm/IR/TfmDialect.cpp.inc"

void TfmDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/Tfm/IR/TfmOps.cpp.inc"
      >();
}
