//===- Signature.cpp - A model's inputs, outputs and symbols ----*- C++ -*-===//

#include "Signature.h"
#include "Json.h"
#include "Status.h"
#include "Tensor.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>
#include <optional>
#include <set>

using json = nlohmann::json;

namespace tfm::rt {

namespace {

/// The one ABI version this runtime understands.
constexpr int64_t kAbiVersion = TFM_API_VERSION;

/// A string member of `object`, or nullopt if absent or not a string.
std::optional<std::string> stringMember(const json &object, const char *key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_string())
    return std::nullopt;
  return it->get<std::string>();
}

bool parseTensorSpec(const json &value, const std::string &where,
                     const std::vector<std::string> &symbols, TensorSpec &spec,
                     std::string &error) {
  if (!value.is_object()) {
    error = fmt::format("{} is not an object", where);
    return false;
  }
  std::optional<std::string> name = stringMember(value, "name");
  if (!name || name->empty()) {
    error = fmt::format("{} has no \"name\" string", where);
    return false;
  }
  spec.name = *name;
  std::optional<std::string> dtypeName = stringMember(value, "dtype");
  std::optional<tfm_dtype> dtype =
      dtypeName ? parseDtypeName(*dtypeName) : std::nullopt;
  if (!dtype) {
    error = fmt::format("{} ('{}'): \"dtype\" must be one of f32, f64, i32, "
                        "i64, bool, f16, bf16, i8, u8",
                        where, spec.name);
    return false;
  }
  spec.dtype = *dtype;
  if (auto cache = value.find("cache"); cache != value.end()) {
    if (!cache->is_boolean()) {
      error = fmt::format("{} ('{}'): \"cache\" must be true or false", where,
                          spec.name);
      return false;
    }
    spec.cache = cache->get<bool>();
  }
  auto shape = value.find("shape");
  if (shape == value.end() || !shape->is_array()) {
    error = fmt::format("{} ('{}') has no \"shape\" array", where, spec.name);
    return false;
  }
  if (shape->size() > TFM_MAX_RANK) {
    error = fmt::format("{} ('{}') has rank {}, more than the maximum of {}",
                        where, spec.name, shape->size(), TFM_MAX_RANK);
    return false;
  }
  for (size_t d = 0; d < shape->size(); ++d) {
    const json &dim = (*shape)[d];
    DimSpec dimSpec;
    if (dim.is_number_integer() && dim.get<int64_t>() >= 0) {
      dimSpec.size = dim.get<int64_t>();
    } else if (dim.is_string()) {
      auto it =
          std::find(symbols.begin(), symbols.end(), dim.get<std::string>());
      if (it == symbols.end()) {
        error = fmt::format("{} ('{}') dim {} names '{}', which is not in "
                            "\"symbols\"",
                            where, spec.name, d, dim.get<std::string>());
        return false;
      }
      dimSpec.symbol = static_cast<int>(it - symbols.begin());
    } else {
      error = fmt::format("{} ('{}') dim {} is {}, not a non-negative integer "
                          "or a symbol name",
                          where, spec.name, d, describeJson(dim));
      return false;
    }
    spec.dims.push_back(dimSpec);
  }
  return true;
}

bool parseTensorList(const json &root, const char *key,
                     const std::vector<std::string> &symbols,
                     std::vector<TensorSpec> &specs, std::string &error) {
  auto list = root.find(key);
  if (list == root.end() || !list->is_array()) {
    error = fmt::format("no \"{}\" array", key);
    return false;
  }
  std::set<std::string> names;
  for (size_t i = 0; i < list->size(); ++i) {
    TensorSpec spec;
    if (!parseTensorSpec((*list)[i], fmt::format("{}[{}]", key, i), symbols,
                         spec, error))
      return false;
    if (!names.insert(spec.name).second) {
      error =
          fmt::format("{}[{}]: the name '{}' is used twice", key, i, spec.name);
      return false;
    }
    specs.push_back(std::move(spec));
  }
  return true;
}

} // namespace

std::string Signature::describe(const TensorSpec &spec) const {
  std::string text = fmt::format("{}[", tfm_dtype_name(spec.dtype));
  for (size_t d = 0; d < spec.dims.size(); ++d) {
    const DimSpec &dim = spec.dims[d];
    text += d ? ", " : "";
    text += dim.symbol >= 0 ? symbols[dim.symbol] : std::to_string(dim.size);
  }
  return text + "]";
}

bool parseSignature(std::string_view text, Signature &signature,
                    std::string &error) {
  json root;
  std::string jsonError;
  if (!parseBoundedJson(text, root, jsonError)) {
    error = "metadata " + jsonError;
    return false;
  }
  if (!root.is_object()) {
    error = "metadata is not a JSON object";
    return false;
  }
  auto abi = root.find("abi");
  if (abi == root.end() || !abi->is_number_integer() ||
      abi->get<int64_t>() != kAbiVersion) {
    error = fmt::format("metadata: \"abi\" is {}, but this runtime supports "
                        "ABI version {}",
                        abi == root.end() ? "missing" : describeJson(*abi),
                        kAbiVersion);
    return false;
  }
  std::optional<std::string> model = stringMember(root, "model");
  std::optional<std::string> entry = stringMember(root, "entry");
  if (!model || model->empty() || !entry || entry->empty()) {
    error = "metadata: \"model\" and \"entry\" must be non-empty strings";
    return false;
  }
  signature.model = *model;
  signature.entry = *entry;
  // Both or neither: artifacts older than the workspace entry points have
  // neither, and then runs allocate their scratch inside the entry point.
  std::optional<std::string> workspaceEntry =
      stringMember(root, "workspace_entry");
  std::optional<std::string> workspaceSize =
      stringMember(root, "workspace_size");
  bool hasEntry = root.contains("workspace_entry"),
       hasSize = root.contains("workspace_size");
  if (hasEntry != hasSize ||
      (hasEntry && (!workspaceEntry || workspaceEntry->empty() ||
                    !workspaceSize || workspaceSize->empty()))) {
    error = "metadata: \"workspace_entry\" and \"workspace_size\" must both "
            "be non-empty strings, or both be absent";
    return false;
  }
  if (hasEntry) {
    signature.workspaceEntry = *workspaceEntry;
    signature.workspaceSize = *workspaceSize;
  }

  if (auto symbols = root.find("symbols"); symbols != root.end()) {
    if (!symbols->is_array()) {
      error = "metadata: \"symbols\" is not an array";
      return false;
    }
    for (const json &symbol : *symbols) {
      if (!symbol.is_string() || symbol.get<std::string>().empty()) {
        error = fmt::format("metadata: symbol {} is not a non-empty string",
                            describeJson(symbol));
        return false;
      }
      if (std::find(signature.symbols.begin(), signature.symbols.end(),
                    symbol.get<std::string>()) != signature.symbols.end()) {
        error = fmt::format("metadata: symbol '{}' is declared twice",
                            symbol.get<std::string>());
        return false;
      }
      signature.symbols.push_back(symbol.get<std::string>());
    }
  }

  if (!parseTensorList(root, "inputs", signature.symbols, signature.inputs,
                       error) ||
      !parseTensorList(root, "outputs", signature.symbols, signature.outputs,
                       error)) {
    error = "metadata: " + error;
    return false;
  }

  if (auto errors = root.find("errors"); errors != root.end()) {
    if (!errors->is_array()) {
      error = "metadata: \"errors\" is not an array";
      return false;
    }
    for (const json &entry : *errors) {
      auto code = entry.find("code");
      auto message = entry.find("message");
      if (!entry.is_object() || code == entry.end() ||
          !code->is_number_integer() || message == entry.end() ||
          !message->is_string()) {
        error = "metadata: \"errors\" entries need an integer \"code\" and "
                "a string \"message\"";
        return false;
      }
      // Entry points return an int32_t: a code outside its range could never
      // be returned, and truncating it would pair a real code with the
      // message of another.
      bool inRange =
          code->is_number_unsigned()
              ? code->get<uint64_t>() <=
                    uint64_t(std::numeric_limits<int32_t>::max())
              : code->get<int64_t>() >= std::numeric_limits<int32_t>::min() &&
                    code->get<int64_t>() <= std::numeric_limits<int32_t>::max();
      if (!inRange || code->get<int64_t>() == 0) {
        error = fmt::format("metadata: \"errors\" code {} is not a non-zero "
                            "32-bit integer",
                            describeJson(*code));
        return false;
      }
      auto [it, inserted] = signature.errors.emplace(
          code->get<int32_t>(), message->get<std::string>());
      if (!inserted) {
        error =
            fmt::format("metadata: \"errors\" lists code {} twice", it->first);
        return false;
      }
    }
  }

  if (auto device = root.find("device"); device != root.end()) {
    if (!device->is_string() || device->get<std::string>() != "cuda") {
      error = fmt::format("metadata: \"device\" is {}, not \"cuda\" (this "
                          "runtime knows host and cuda artifacts)",
                          describeJson(*device));
      return false;
    }
    signature.device = "cuda";
  }

  // Symbols are bound from input shapes only, so each must occur in one.
  std::vector<bool> bound(signature.symbols.size(), false);
  for (const TensorSpec &input : signature.inputs)
    for (const DimSpec &dim : input.dims)
      if (dim.symbol >= 0)
        bound[dim.symbol] = true;
  for (size_t s = 0; s < bound.size(); ++s) {
    if (!bound[s]) {
      error = fmt::format("metadata: symbol '{}' occurs in no input shape, so "
                          "its value cannot be known",
                          signature.symbols[s]);
      return false;
    }
  }
  return true;
}

tfm_status bindInputs(const Signature &signature, const tfm_tensor *inputs,
                      size_t inputCount, std::vector<int64_t> &symbolValues) {
  if (inputCount != signature.inputs.size()) {
    std::string names;
    for (const TensorSpec &spec : signature.inputs)
      names += fmt::format("{}{}", names.empty() ? "" : ", ", spec.name);
    return makeStatus(TFM_STATUS_INVALID_ARGUMENT,
                      fmt::format("got {} inputs but model '{}' takes {} ({})",
                                  inputCount, signature.model,
                                  signature.inputs.size(), names));
  }
  symbolValues.assign(signature.symbols.size(), -1);
  // Which input bound a symbol is looked up again only for a message, so
  // that a run that passes the checks allocates nothing.
  auto binder = [&](int symbol) -> const std::string & {
    for (const TensorSpec &spec : signature.inputs)
      for (const DimSpec &dim : spec.dims)
        if (dim.symbol == symbol)
          return spec.name;
    return signature.model;
  };
  for (size_t i = 0; i < inputCount; ++i) {
    const TensorSpec &spec = signature.inputs[i];
    const tfm_tensor &input = inputs[i];
    if (input.dtype != spec.dtype)
      return makeStatus(
          TFM_STATUS_INVALID_ARGUMENT,
          fmt::format("input '{}': dtype is {} but the model expects {}",
                      spec.name, tfm_dtype_name(input.dtype),
                      signature.describe(spec)));
    if (input.rank != static_cast<int32_t>(spec.dims.size()))
      return makeStatus(
          TFM_STATUS_SHAPE_MISMATCH,
          fmt::format("input '{}': rank is {} but the model expects {}",
                      spec.name, input.rank, signature.describe(spec)));
    if (!elementCount(input.shape, input.rank))
      return makeStatus(TFM_STATUS_INVALID_ARGUMENT,
                        fmt::format("input '{}': shape {} is not a valid shape",
                                    spec.name,
                                    formatShape(input.shape, input.rank)));
    for (size_t d = 0; d < spec.dims.size(); ++d) {
      const DimSpec &dim = spec.dims[d];
      int64_t actual = input.shape[d];
      if (dim.symbol < 0) {
        if (actual != dim.size)
          return makeStatus(
              TFM_STATUS_SHAPE_MISMATCH,
              fmt::format("input '{}' dim {} is {} but the model expects {}",
                          spec.name, d, actual, signature.describe(spec)));
        continue;
      }
      int64_t &value = symbolValues[dim.symbol];
      if (value < 0) {
        value = actual;
      } else if (value != actual) {
        return makeStatus(
            TFM_STATUS_SHAPE_MISMATCH,
            fmt::format("input '{}' dim {} is {} but symbol '{}' was bound to "
                        "{} by input '{}'",
                        spec.name, d, actual, signature.symbols[dim.symbol],
                        value, binder(dim.symbol)));
      }
    }
  }
  return nullptr;
}

void outputShape(const Signature &signature, size_t index,
                 const std::vector<int64_t> &symbolValues, int64_t *shape) {
  const TensorSpec &spec = signature.outputs[index];
  for (size_t d = 0; d < TFM_MAX_RANK; ++d)
    shape[d] = 0;
  for (size_t d = 0; d < spec.dims.size(); ++d) {
    const DimSpec &dim = spec.dims[d];
    shape[d] = dim.symbol >= 0 ? symbolValues[dim.symbol] : dim.size;
  }
}

} // namespace tfm::rt
