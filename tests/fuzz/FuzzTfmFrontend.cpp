//===- FuzzTfmFrontend.cpp - Fuzz the .tfm parser, builder and verifier ---===//
//
// Each input is a model file. Weights come from lines of the form
//   #!w NAME DTYPE D0 D1 ...
// (a comment to the language), so that seeds made from real models reach
// the layers that read weights. Properties:
// - a rejected model gives at least one error, and every error points into
//   the model file (file:line:col), as docs/language.md promises;
// - an accepted model verifies, and its printed IR parses back and verifies
//   (what tfm-compile --emit=tfm prints, tfm-opt reads).
//
//===----------------------------------------------------------------------===//
#include "MemoryFile.h"

#include "compiler/Frontend/Parser.h"
#include "compiler/Registration/Registration.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace mlir;

namespace {

class FuzzWeights : public tfm::WeightShapes {
public:
  explicit FuzzWeights(StringRef text) {
    SmallVector<StringRef> lines;
    text.split(lines, '\n');
    for (StringRef line : lines) {
      if (!line.consume_front("#!w "))
        continue;
      SmallVector<StringRef> fields;
      line.split(fields, ' ', -1, /*KeepEmpty=*/false);
      if (fields.size() < 2)
        continue;
      Entry entry{fields[1].trim().str(), {}};
      bool ok = true;
      for (StringRef field : ArrayRef(fields).drop_front(2)) {
        int64_t dim = 0;
        ok = ok && !field.trim().getAsInteger(10, dim);
        entry.shape.push_back(dim);
      }
      if (ok)
        table[fields[0].str()] = std::move(entry);
    }
  }

  std::optional<Info> lookup(MLIRContext *ctx, StringRef name) override {
    auto it = table.find(name.str());
    if (it == table.end())
      return std::nullopt;
    Type type = StringSwitch<Type>(it->second.dtype)
                    .Case("f64", Float64Type::get(ctx))
                    .Case("i64", IntegerType::get(ctx, 64))
                    .Case("i32", IntegerType::get(ctx, 32))
                    .Default(Float32Type::get(ctx));
    return Info{type, it->second.shape, ""};
  }

private:
  struct Entry {
    std::string dtype;
    SmallVector<int64_t> shape;
  };
  std::map<std::string, Entry> table;
};

MLIRContext &context() {
  static MLIRContext *ctx = [] {
    DialectRegistry registry;
    tfm::registerAllDialects(registry);
    auto *ctx = new MLIRContext(registry);
    ctx->loadAllAvailableDialects();
    return ctx;
  }();
  return *ctx;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  MLIRContext &ctx = context();
  StringRef text(reinterpret_cast<const char *>(data), size);
  FuzzWeights weights(text);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, "model.tfm"), llvm::SMLoc());

  int errors = 0;
  std::string unlocated;
  FailureOr<OwningOpRef<ModuleOp>> parsed;
  {
    ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
      if (diag.getSeverity() != DiagnosticSeverity::Error)
        return success();
      ++errors;
      // Name or fused locations wrap the file location the message needs.
      auto loc = diag.getLocation()->findInstanceOf<FileLineColLoc>();
      if (!loc || loc.getFilename() != "model.tfm" || loc.getLine() == 0)
        unlocated = diag.str();
      return success();
    });
    parsed = tfm::parseModel(sourceMgr, &ctx, &weights);
  }
  if (!unlocated.empty()) {
    llvm::errs() << "error without a location in the model: " << unlocated
                 << "\n";
    tfmfuzz::propertyFailed("every error points into the model file");
  }
  if (failed(parsed)) {
    TFM_FUZZ_CHECK(errors > 0);
    return 0;
  }
  TFM_FUZZ_CHECK(errors == 0);
  ModuleOp module = parsed->get();
  TFM_FUZZ_CHECK(succeeded(verify(module)));

  std::string printed;
  llvm::raw_string_ostream os(printed);
  module.print(os);
  std::string reparseError;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
    reparseError = diag.str();
    return success();
  });
  OwningOpRef<ModuleOp> reparsed = parseSourceString<ModuleOp>(printed, &ctx);
  if (!reparsed || failed(verify(*reparsed))) {
    llvm::errs() << printed << "\n" << reparseError << "\n";
    tfmfuzz::propertyFailed("printed IR parses back");
  }
  return 0;
}
