//===- ExternalizeWeights.cpp - Constant data to a mapped sidecar file ----===//
//
// `--weights-mode external`: the weights leave the artifact. Their final
// bytes (packed, widened or as bound) go to a sidecar .safetensors file, and
// the code reads them through one pointer, `__tfm_weights_base`, that
// `tfm_<model>_bind_weights` sets to the data section of the mapped file.
// What the file must hold (names, dtypes, shapes, offsets, a hash of each
// tensor's bytes) is recorded in `tfm_<model>_weights_manifest()`, which the
// runtime checks a file against before it binds it (docs/embedding.md).
//
// With `embed` (the default `--weights-mode embedded`) the bytes stay in the
// artifact but not in LLVM: the code reads them at offsets from a local
// symbol that starts a section of their own, which the object writer fills
// (compiler/Transforms/EmbeddedWeights.h). Nothing is bound at run time.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/ConstantData.h"
#include "compiler/Transforms/EmbeddedWeights.h"
#include "compiler/Transforms/Passes.h"
#include "compiler/Transforms/Signature.h"
#include "tfm/safetensors.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMEXTERNALIZEWEIGHTS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {
/// What the run entry points return while no weights are bound.
constexpr int32_t kWeightsNotBoundStatus = -6;
/// What bind returns for a pointer or size that is not the manifest's.
constexpr int32_t kBadWeightsStatus = -3;
constexpr llvm::StringLiteral kBaseName = "__tfm_weights_base";

/// The safetensors dtype of `type`'s elements, or "" for types whose raw
/// data is not their memory layout (i1 is stored as bits).
StringRef dtypeOf(Type type) {
  if (type.isF32())
    return "F32";
  if (type.isF64())
    return "F64";
  if (type.isF16())
    return "F16";
  if (type.isBF16())
    return "BF16";
  if (type.isInteger(64))
    return "I64";
  if (type.isInteger(32))
    return "I32";
  if (type.isInteger(16))
    return "I16";
  if (type.isInteger(8))
    return "I8";
  return "";
}

/// The name a constant goes by in the sidecar: the weight's (or packed
/// weight's) name that BindWeights and PackLinear put in its location, else
/// its symbol.
std::string nameOf(LLVM::GlobalOp global) {
  std::string name;
  global.getLoc()->walk([&](Location l) {
    if (auto named = dyn_cast<NameLoc>(l)) {
      name = named.getName().str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return name.empty() ? global.getSymName().str() : name;
}

std::string hex(uint64_t value) {
  return llvm::utohexstr(value, /*LowerCase=*/true, /*Width=*/16);
}

struct Constant {
  LLVM::GlobalOp global;
  ElementsAttr data;
  ArrayRef<char> raw;
  std::string name;
  StringRef dtype;
  int64_t offset = 0;
  uint64_t hash = 0;
  size_t order = 0; ///< in the module
};

struct TfmExternalizeWeightsPass
    : mlir::tfm::impl::TfmExternalizeWeightsBase<TfmExternalizeWeightsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    Operation *model = nullptr;
    module.walk([&](LLVM::LLVMFuncOp f) {
      if (f->hasAttr("tfm.signature"))
        model = f;
    });
    if (!model) {
      module.emitError("tfm-externalize-weights: no function with "
                       "tfm.signature");
      return signalPassFailure();
    }
    FailureOr<mlir::tfm::Signature> sig = mlir::tfm::Signature::read(model);
    if (failed(sig))
      return signalPassFailure();
    std::string prefix = "tfm_" + sig->model;

    SmallVector<Constant> constants = collect(module);
    // A model without constant data gets no section.
    if (embed && constants.empty())
      return;
    // Widest elements first: with the data section 64-byte aligned, every
    // tensor is then aligned to its element size (the code's loads assume
    // it), and the large packed f32 panels to 64 bytes when sizes allow.
    llvm::sort(constants, [](const Constant &a, const Constant &b) {
      unsigned aBits = a.data.getElementType().getIntOrFloatBitWidth();
      unsigned bBits = b.data.getElementType().getIntOrFloatBitWidth();
      return aBits != bBits ? aBits > bBits : a.order < b.order;
    });
    std::map<std::string, int> seen;
    int64_t offset = 0;
    for (Constant &c : constants) {
      // Two constants may come from one weight (a slice packed twice).
      if (int n = seen[c.name]++)
        c.name += "#" + std::to_string(n);
      // Embedded tensors start on cache lines, as the byte globals of
      // tfm-weights-as-bytes did; a .safetensors file has no gaps.
      if (embed)
        offset = llvm::alignTo(offset, mlir::tfm::kEmbeddedWeightsAlignment);
      c.offset = offset;
      ArrayRef<char> raw = c.raw;
      // The manifest's hashes check a sidecar; the section needs none.
      if (!embed)
        c.hash = ::tfm::hashBytes(raw.data(), raw.size());
      offset += raw.size();
    }
    int64_t total = offset;
    if (embed) {
      embedInSection(module, constants, total);
      return;
    }
    std::string fileName = llvm::sys::path::filename(weightsFile).str();
    std::string manifest = makeManifest(*sig, fileName, constants, total);
    if (!weightsFile.empty() && failed(writeSidecar(module, *sig, constants)))
      return signalPassFailure();

    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    LLVM::GlobalOp base = createBase(b, module.getLoc());
    rewriteUses(module, constants, [&](OpBuilder &b, Location loc) -> Value {
      Value slot = LLVM::AddressOfOp::create(b, loc, base);
      return LLVM::LoadOp::create(
          b, loc, LLVM::LLVMPointerType::get(b.getContext()), slot);
    });
    for (Constant &c : constants)
      c.global.erase();
    emitBind(b, module.getLoc(), prefix, base, total);
    emitManifest(b, module.getLoc(), prefix, manifest);
    guardRuns(module, prefix, base);
  }

  static SmallVector<Constant> collect(ModuleOp module) {
    SmallVector<Constant> constants;
    for (auto global : module.getOps<LLVM::GlobalOp>()) {
      auto data = dyn_cast_or_null<ElementsAttr>(global.getValueOrNull());
      std::optional<ArrayRef<char>> raw = mlir::tfm::getRawConstantData(data);
      if (!global.getConstant() || !raw ||
          !data.getElementType().isIntOrFloat())
        continue;
      StringRef dtype = dtypeOf(data.getElementType());
      if (dtype.empty())
        continue;
      constants.push_back({global, data, *raw, nameOf(global), dtype});
      constants.back().order = constants.size();
    }
    return constants;
  }

  /// The manifest, written by a JSON writer: weight names may hold any
  /// character a safetensors file allows, file names quotes or backslashes.
  static std::string makeManifest(const mlir::tfm::Signature &sig,
                                  StringRef fileName,
                                  ArrayRef<Constant> constants, int64_t total) {
    std::string json;
    llvm::raw_string_ostream os(json);
    SmallVector<uint64_t> hashes;
    for (const Constant &c : constants)
      hashes.push_back(c.hash);
    llvm::json::OStream out(os);
    out.object([&] {
      out.attribute("format", 1);
      out.attribute("model", sig.model);
      out.attribute("file", fileName);
      out.attribute("bytes", total);
      out.attribute("hash",
                    hex(::tfm::hashBytes(hashes.data(), hashes.size() * 8)));
      out.attributeArray("tensors", [&] {
        for (const Constant &c : constants)
          out.object([&] {
            out.attribute("name", c.name);
            out.attribute("dtype", c.dtype);
            out.attributeArray("shape", [&] {
              for (int64_t d : c.data.getShapedType().getShape())
                out.value(d);
            });
            out.attribute("offset", c.offset);
            out.attribute("bytes", int64_t(c.raw.size()));
            out.attribute("hash", hex(c.hash));
          });
      });
    });
    return json;
  }

  LogicalResult writeSidecar(ModuleOp module, const mlir::tfm::Signature &sig,
                             ArrayRef<Constant> constants) {
    std::vector<::tfm::SafeTensorWriteEntry> entries;
    for (const Constant &c : constants) {
      ::tfm::SafeTensorWriteEntry entry;
      entry.name = c.name;
      entry.dtype = c.dtype.str();
      entry.shape = c.data.getShapedType().getShape().vec();
      entry.data = c.raw.data();
      entries.push_back(std::move(entry));
    }
    std::string error;
    if (!::tfm::writeSafeTensors(weightsFile, entries, error,
                                 {{"format", "tfm-weights"},
                                  {"version", "1"},
                                  {"model", sig.model}}))
      return module.emitError(error);
    return success();
  }

  static LLVM::GlobalOp createBase(OpBuilder &b, Location loc) {
    auto ptrType = LLVM::LLVMPointerType::get(b.getContext());
    auto base =
        LLVM::GlobalOp::create(b, loc, ptrType, /*isConstant=*/false,
                               LLVM::Linkage::Internal, kBaseName, Attribute());
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(b.createBlock(&base.getInitializerRegion()));
    LLVM::ReturnOp::create(b, loc, LLVM::ZeroOp::create(b, loc, ptrType));
    return base;
  }

  /// The weights as one external constant the size of the section, which
  /// module-level assembly defines as a local, hidden label at the
  /// section's start: LLVM addresses it directly (PC-relative, no GOT), sees
  /// no initializer it could copy or fold, and the section reaches the
  /// object empty. The declaration records the tensors for the writer.
  static void embedInSection(ModuleOp module,
                             MutableArrayRef<Constant> constants,
                             int64_t total) {
    MLIRContext *ctx = module.getContext();
    Location loc = module.getLoc();
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    auto arrayType = LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), total);
    auto symbol = LLVM::GlobalOp::create(
        b, loc, arrayType, /*isConstant=*/true, LLVM::Linkage::External,
        mlir::tfm::kEmbeddedWeightsSymbol, Attribute(),
        /*alignment=*/mlir::tfm::kEmbeddedWeightsAlignment);
    symbol.setVisibility_(LLVM::Visibility::Hidden);
    symbol.setDsoLocal(true);
    SmallVector<Attribute> tensors;
    for (const Constant &c : constants)
      tensors.push_back(b.getDictionaryAttr(
          {b.getNamedAttr("name", b.getStringAttr(c.name)),
           b.getNamedAttr("offset", b.getI64IntegerAttr(c.offset)),
           b.getNamedAttr("data", c.data)}));
    symbol->setAttr(mlir::tfm::kEmbeddedWeightsAttr,
                    b.getDictionaryAttr(
                        {b.getNamedAttr("size", b.getI64IntegerAttr(total)),
                         b.getNamedAttr("tensors", b.getArrayAttr(tensors))}));
    rewriteUses(module, constants, [&](OpBuilder &b, Location loc) -> Value {
      return LLVM::AddressOfOp::create(b, loc, symbol);
    });
    for (Constant &c : constants)
      c.global.erase();

    std::string section = mlir::tfm::kEmbeddedWeightsSection.str();
    std::string label = mlir::tfm::kEmbeddedWeightsSymbol.str();
    SmallVector<Attribute> lines;
    if (auto existing = module->getAttrOfType<ArrayAttr>(
            LLVM::LLVMDialect::getModuleLevelAsmAttrName()))
      llvm::append_range(lines, existing.getValue());
    for (std::string line :
         {"\t.pushsection " + section + ",\"a\",@progbits",
          "\t.p2align " + std::to_string(llvm::Log2_64(
                              mlir::tfm::kEmbeddedWeightsAlignment)),
          label + ":",
          "\t# " + std::to_string(total) +
              " bytes of weights, written here in objects and libraries",
          std::string("\t.popsection")})
      lines.push_back(b.getStringAttr(line));
    module->setAttr(LLVM::LLVMDialect::getModuleLevelAsmAttrName(),
                    b.getArrayAttr(lines));
  }

  /// Each address of a constant becomes `base` plus its offset.
  static void rewriteUses(ModuleOp module, ArrayRef<Constant> constants,
                          function_ref<Value(OpBuilder &, Location)> makeBase) {
    llvm::StringMap<int64_t> offsets;
    for (Constant c : constants)
      offsets[c.global.getSymName()] = c.offset;
    auto ptrType = LLVM::LLVMPointerType::get(module.getContext());
    SmallVector<LLVM::AddressOfOp> addresses;
    module.walk([&](LLVM::AddressOfOp op) {
      if (offsets.count(op.getGlobalName()))
        addresses.push_back(op);
    });
    for (LLVM::AddressOfOp op : addresses) {
      OpBuilder b(op);
      Location loc = op.getLoc();
      Value pointer = makeBase(b, loc);
      Value address = pointer;
      if (int64_t offset = offsets.lookup(op.getGlobalName())) {
        Value delta = LLVM::ConstantOp::create(b, loc, b.getI64Type(),
                                               b.getI64IntegerAttr(offset));
        address = LLVM::GEPOp::create(b, loc, ptrType, b.getI8Type(), pointer,
                                      ValueRange{delta},
                                      LLVM::GEPNoWrapFlags::inbounds);
      }
      op.replaceAllUsesWith(address);
      op.erase();
    }
  }

  /// `int32_t <prefix>_bind_weights(const void *data, int64_t bytes)`:
  /// data is the sidecar's data section, 64-byte aligned, of exactly the
  /// manifest's size; NULL with 0 unbinds.
  static void emitBind(OpBuilder &b, Location loc, StringRef prefix,
                       LLVM::GlobalOp base, int64_t total) {
    MLIRContext *ctx = b.getContext();
    auto ptrType = LLVM::LLVMPointerType::get(ctx);
    Type i64 = b.getI64Type(), i32 = b.getI32Type();
    auto fn = LLVM::LLVMFuncOp::create(
        b, loc, (prefix + "_bind_weights").str(),
        LLVM::LLVMFunctionType::get(i32, {ptrType, i64}));
    OpBuilder::InsertionGuard guard(b);
    Block *entry = fn.addEntryBlock(b);
    b.setInsertionPointToStart(entry);
    auto constant = [&](int64_t v) {
      return LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(v));
    };
    Value data = entry->getArgument(0), bytes = entry->getArgument(1);
    Value address = LLVM::PtrToIntOp::create(b, loc, i64, data);
    Value isNull = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq,
                                        address, constant(0));
    Value noBytes = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, bytes,
                                         constant(0));
    Value rightSize = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq,
                                           bytes, constant(total));
    Value aligned = LLVM::ICmpOp::create(
        b, loc, LLVM::ICmpPredicate::eq,
        LLVM::AndOp::create(b, loc, address, constant(63)), constant(0));
    Value unbind = LLVM::AndOp::create(b, loc, isNull, noBytes);
    Value bind = LLVM::AndOp::create(
        b, loc, LLVM::AndOp::create(b, loc, rightSize, aligned),
        LLVM::XOrOp::create(b, loc, isNull,
                            LLVM::ConstantOp::create(b, loc, b.getI1Type(),
                                                     b.getBoolAttr(true))));
    Value ok = LLVM::OrOp::create(b, loc, unbind, bind);
    Block *store = b.createBlock(&fn.getBody());
    Block *fail = b.createBlock(&fn.getBody());
    b.setInsertionPointToEnd(entry);
    LLVM::CondBrOp::create(b, loc, ok, store, fail);
    b.setInsertionPointToStart(store);
    // Release: runs that see the pointer see the mapping behind it.
    LLVM::StoreOp::create(b, loc, data, LLVM::AddressOfOp::create(b, loc, base),
                          /*alignment=*/8, /*isVolatile=*/false,
                          /*isNonTemporal=*/false, /*isInvariantGroup=*/false,
                          LLVM::AtomicOrdering::release);
    LLVM::ReturnOp::create(
        b, loc, LLVM::ConstantOp::create(b, loc, i32, b.getI32IntegerAttr(0)));
    b.setInsertionPointToStart(fail);
    LLVM::ReturnOp::create(
        b, loc,
        LLVM::ConstantOp::create(b, loc, i32,
                                 b.getI32IntegerAttr(kBadWeightsStatus)));
  }

  static void emitManifest(OpBuilder &b, Location loc, StringRef prefix,
                           std::string json) {
    json.push_back('\0');
    MLIRContext *ctx = b.getContext();
    auto arrayType =
        LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), json.size());
    std::string globalName = (prefix + "_weights_manifest_json").str();
    LLVM::GlobalOp::create(b, loc, arrayType, /*isConstant=*/true,
                           LLVM::Linkage::Internal, globalName,
                           b.getStringAttr(json));
    auto ptrType = LLVM::LLVMPointerType::get(ctx);
    OpBuilder::InsertionGuard guard(b);
    auto fn =
        LLVM::LLVMFuncOp::create(b, loc, (prefix + "_weights_manifest").str(),
                                 LLVM::LLVMFunctionType::get(ptrType, {}));
    b.setInsertionPointToStart(fn.addEntryBlock(b));
    LLVM::ReturnOp::create(
        b, loc, LLVM::AddressOfOp::create(b, loc, ptrType, globalName));
  }

  /// Every exported run entry point returns kWeightsNotBoundStatus, before
  /// reading anything, while no weights are bound.
  static void guardRuns(ModuleOp module, StringRef prefix,
                        LLVM::GlobalOp base) {
    std::string runPrefix = (prefix + "_run").str();
    for (auto fn : module.getOps<LLVM::LLVMFuncOp>()) {
      if (fn.isExternal() || fn.getLinkage() != LLVM::Linkage::External ||
          !fn.getName().starts_with(runPrefix) ||
          !fn.getFunctionType().getReturnType().isInteger(32))
        continue;
      Block *body = &fn.getBody().front();
      Location loc = fn.getLoc();
      OpBuilder b(fn.getContext());
      Block *check = b.createBlock(body);
      Block *fail = b.createBlock(body);
      // The entry block keeps the arguments: they move to the new first one.
      for (BlockArgument arg : body->getArguments())
        check->addArgument(arg.getType(), arg.getLoc());
      for (auto [from, to] :
           llvm::zip(body->getArguments(), check->getArguments()))
        from.replaceAllUsesWith(to);
      body->eraseArguments(0, body->getNumArguments());
      b.setInsertionPointToStart(check);
      auto ptrType = LLVM::LLVMPointerType::get(fn.getContext());
      Value pointer = LLVM::LoadOp::create(
          b, loc, ptrType, LLVM::AddressOfOp::create(b, loc, base),
          /*alignment=*/8, /*isVolatile=*/false, /*isNonTemporal=*/false,
          /*isInvariant=*/false, /*isInvariantGroup=*/false,
          LLVM::AtomicOrdering::acquire);
      Value unbound =
          LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, pointer,
                               LLVM::ZeroOp::create(b, loc, ptrType));
      LLVM::CondBrOp::create(b, loc, unbound, fail, body);
      b.setInsertionPointToStart(fail);
      LLVM::ReturnOp::create(b, loc,
                             LLVM::ConstantOp::create(
                                 b, loc, b.getI32Type(),
                                 b.getI32IntegerAttr(kWeightsNotBoundStatus)));
    }
  }
};
} // namespace
