//===- Signature.cpp - A model's ABI signature ----------------------------===//
#include "compiler/Transforms/Signature.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/JSON.h"

using namespace mlir;
using namespace mlir::tfm;

static FailureOr<SmallVector<SignatureTensor>>
readTensors(Operation *op, DictionaryAttr dict, StringRef key,
            ArrayRef<std::string> symbols) {
  auto list = dict.getAs<ArrayAttr>(key);
  if (!list)
    return op->emitError("tfm.signature needs an array '") << key << "'";
  SmallVector<SignatureTensor> tensors;
  for (Attribute a : list) {
    auto entry = dyn_cast<DictionaryAttr>(a);
    auto name = entry ? entry.getAs<StringAttr>("name") : nullptr;
    auto dtype = entry ? entry.getAs<StringAttr>("dtype") : nullptr;
    auto shape = entry ? entry.getAs<ArrayAttr>("shape") : nullptr;
    if (!name || !dtype || !shape)
      return op->emitError("tfm.signature '")
             << key << "' entries need name, dtype and shape";
    SignatureTensor tensor{name.str(), dtype.str(), {}};
    if (auto cache = entry.getAs<BoolAttr>("cache"))
      tensor.cache = cache.getValue();
    for (Attribute d : shape) {
      if (auto size = dyn_cast<IntegerAttr>(d)) {
        tensor.dims.push_back({size.getInt(), -1});
        continue;
      }
      auto sym = dyn_cast<StringAttr>(d);
      const std::string *it =
          sym ? llvm::find(symbols, sym.str()) : symbols.end();
      if (it == symbols.end())
        return op->emitError("tfm.signature: dimension ")
               << d << " of '" << name.str() << "' is not a declared symbol";
      tensor.dims.push_back({0, int64_t(it - symbols.begin())});
    }
    tensors.push_back(std::move(tensor));
  }
  return tensors;
}

FailureOr<Signature> Signature::read(Operation *op) {
  auto dict = op->getAttrOfType<DictionaryAttr>("tfm.signature");
  if (!dict)
    return op->emitError("missing the tfm.signature attribute");
  Signature sig;
  auto model = dict.getAs<StringAttr>("model");
  auto symbols = dict.getAs<ArrayAttr>("symbols");
  if (!model || !symbols)
    return op->emitError("tfm.signature needs 'model' and 'symbols'");
  sig.model = model.str();
  for (Attribute s : symbols) {
    auto str = dyn_cast<StringAttr>(s);
    if (!str)
      return op->emitError("tfm.signature symbols must be strings");
    sig.symbols.push_back(str.str());
  }
  auto inputs = readTensors(op, dict, "inputs", sig.symbols);
  if (failed(inputs))
    return failure();
  auto outputs = readTensors(op, dict, "outputs", sig.symbols);
  if (failed(outputs))
    return failure();
  sig.inputs = std::move(*inputs);
  sig.outputs = std::move(*outputs);
  if (Attribute errors = dict.get("errors")) {
    auto list = dyn_cast<ArrayAttr>(errors);
    if (!list)
      return op->emitError("tfm.signature 'errors' must be an array");
    for (Attribute a : list) {
      auto entry = dyn_cast<DictionaryAttr>(a);
      auto code = entry ? entry.getAs<IntegerAttr>("code") : nullptr;
      auto message = entry ? entry.getAs<StringAttr>("message") : nullptr;
      if (!code || !message || code.getInt() == 0)
        return op->emitError("tfm.signature 'errors' entries need a non-zero "
                             "code and a message");
      sig.errors.push_back({code.getInt(), message.str()});
    }
  }
  if (Attribute device = dict.get("device")) {
    auto name = dyn_cast<StringAttr>(device);
    if (!name || name.getValue() != "cuda")
      return op->emitError("tfm.signature 'device' must be \"cuda\"");
    sig.device = name.str();
  }
  return sig;
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
