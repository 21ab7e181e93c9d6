//===- FrontendTestUtils.h - Parse .tfm text and collect diagnostics -*- C++
//-*-===//
#ifndef TFM_TESTS_UNIT_FRONTEND_FRONTENDTESTUTILS_H
#define TFM_TESTS_UNIT_FRONTEND_FRONTENDTESTUTILS_H

#include "compiler/Frontend/Parser.h"
#include "dialects/Tfm/IR/TfmDialect.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/SourceMgr.h"

#include <map>
#include <string>

namespace tfmtest {

/// Weight shapes from a fixed table, so tests need no files.
class TableWeights : public mlir::tfm::WeightShapes {
public:
  std::map<std::string, std::vector<int64_t>> shapes;
  std::optional<Info> lookup(mlir::MLIRContext *ctx,
                             llvm::StringRef name) override {
    auto it = shapes.find(name.str());
    if (it == shapes.end())
      return std::nullopt;
    return Info{
        mlir::Float32Type::get(ctx),
        llvm::SmallVector<int64_t>(it->second.begin(), it->second.end()), ""};
  }
};

/// The outcome of parsing: the module, or the first error as
/// "line:col: message".
struct ParseResult {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::string error;
};

inline ParseResult parse(mlir::MLIRContext &ctx, const std::string &text,
                         mlir::tfm::WeightShapes *weights = nullptr) {
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, "model.tfm"), llvm::SMLoc());
  ParseResult result;
  mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &diag) {
    if (!result.error.empty())
      return mlir::success();
    std::string where;
    // Inside a function call or a loop the location is a CallSiteLoc whose
    // callee is where the error is.
    if (auto loc = diag.getLocation()->findInstanceOf<mlir::FileLineColLoc>())
      where = std::to_string(loc.getLine()) + ":" +
              std::to_string(loc.getColumn()) + ": ";
    result.error = where + diag.str();
    return mlir::success();
  });
  auto parsed = mlir::tfm::parseModel(sourceMgr, &ctx, weights);
  if (mlir::succeeded(parsed))
    result.module = std::move(*parsed);
  else if (result.error.empty())
    result.error = "failed without a diagnostic";
  return result;
}

} // namespace tfmtest

#endif // TFM_TESTS_UNIT_FRONTEND_FRONTENDTESTUTILS_H
