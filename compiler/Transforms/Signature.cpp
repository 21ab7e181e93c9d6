//===- Signature.cpp - A model's ABI signature ----------------------------===//
#include "compiler/Transforms/Signature.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/JSON.h"

using namespace mlir;
using namespace mlir::tfm;

int64_t mlir::tfm::dtypeByteSize(StringRef dtype) {
  if (dtype == "f64" || dtype == "i64")
    return 8;
  if (dtype == "f32" || dtype == "i32")
    return 4;
  if (dtype == "bf16" || dtype == "f16")
    return 2;
  return 1; // bool and i8
}

/// The attribute's verifier checked what this conversion relies on: every
/// symbol dimension is declared, every element type has a dtype name.
template <typename Specs>
static SmallVector<SignatureTensor> readTensors(Specs specs,
                                                ArrayRef<std::string> symbols) {
  SmallVector<SignatureTensor> tensors;
  for (TensorSpecAttr spec : specs) {
    SignatureTensor tensor{
        spec.getName().str(),
        TensorSpecAttr::dtypeName(spec.getElementType()).str(),
        {}};
    tensor.cache = spec.getCache();
    for (Attribute d : spec.getShape()) {
      if (auto size = dyn_cast<IntegerAttr>(d)) {
        tensor.dims.push_back({size.getInt(), -1});
        continue;
      }
      const std::string *it = llvm::find(symbols, cast<StringAttr>(d).str());
      tensor.dims.push_back({0, int64_t(it - symbols.begin())});
    }
    tensors.push_back(std::move(tensor));
  }
  return tensors;
}

Signature Signature::fromAttr(SignatureAttr attr) {
  Signature sig;
  sig.model = attr.getModel().str();
  for (auto s : attr.getSymbols().getAsRange<StringAttr>())
    sig.symbols.push_back(s.str());
  sig.inputs = readTensors(attr.getInputSpecs(), sig.symbols);
  sig.outputs = readTensors(attr.getOutputSpecs(), sig.symbols);
  for (SignatureErrorAttr e : attr.getErrorSpecs())
    sig.errors.push_back({e.getCode(), e.getMessage().str()});
  if (attr.getDevice())
    sig.device = attr.getDevice().str();
  return sig;
}

FailureOr<Signature> Signature::read(Operation *op) {
  SignatureAttr attr = getSignatureAttr(op);
  if (!attr)
    return op->emitError("missing the tfm.signature attribute");
  return fromAttr(attr);
}

std::string Signature::toJson() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::json::OStream json(os);
  auto tensors = [&](ArrayRef<SignatureTensor> list) {
    json.array([&] {
      for (const SignatureTensor &t : list)
        json.object([&] {
          json.attribute("name", t.name);
          json.attribute("dtype", t.dtype);
          json.attributeArray("shape", [&] {
            for (const SignatureDim &d : t.dims) {
              if (d.symbol >= 0)
                json.value(symbols[d.symbol]);
              else
                json.value(d.staticSize);
            }
          });
          if (t.cache)
            json.attribute("cache", true);
        });
    });
  };
  json.object([&] {
    json.attribute("abi", kArtifactAbiVersion);
    json.attribute("model", model);
    json.attribute("entry", "tfm_" + model + "_run_packed");
    // Optional for a loader (ABI 1 artifacts before them lack them): the
    // packed entry point taking the caller's workspace and its size.
    json.attribute("workspace_entry",
                   "tfm_" + model + "_run_packed_with_workspace");
    json.attribute("workspace_size", "tfm_" + model + "_workspace_size_packed");
    json.attributeArray("symbols", [&] {
      for (const std::string &s : symbols)
        json.value(s);
    });
    json.attributeBegin("inputs");
    tensors(inputs);
    json.attributeEnd();
    json.attributeBegin("outputs");
    tensors(outputs);
    json.attributeEnd();
    if (!device.empty())
      json.attribute("device", device);
    if (!errors.empty())
      json.attributeArray("errors", [&] {
        for (const SignatureError &e : errors)
          json.object([&] {
            json.attribute("code", e.code);
            json.attribute("message", e.message);
          });
      });
  });
  return text;
}
