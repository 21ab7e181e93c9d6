//===- ConfigOverrides.cpp - config() keys set on the command line --------===//
#include "compiler/Frontend/ConfigOverrides.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::tfm;

LogicalResult ConfigOverrides::add(StringRef assignment, std::string &error) {
  auto [key, text] = assignment.split('=');
  key = key.trim();
  if (key.size() == assignment.size()) {
    error = "--set '" + assignment.str() + "': expected KEY=VALUE";
    return failure();
  }
  if (key.empty()) {
    error = "--set '" + assignment.str() + "': the key is empty";
    return failure();
  }
  if (values.count(key)) {
    error = "--set: '" + key.str() + "' is set twice";
    return failure();
  }
  ConfigValue value;
  int64_t integer;
  double number;
  if (text == "true" || text == "false") {
    value.kind = ConfigValue::boolean;
    value.flag = text == "true";
  } else if (!text.getAsInteger(10, integer)) {
    value.num = double(integer);
    value.isInteger = true;
  } else if (!text.empty() &&
             text.find_first_not_of("0123456789+-.eE") == StringRef::npos &&
             llvm::to_float(text, number)) {
    value.num = number;
  } else {
    value.kind = ConfigValue::string;
    value.str = text.str();
  }
  values[key] = Entry{value, false};
  order.push_back(key.str());
  return success();
}

std::optional<WeightShapes::ConfigValue>
ConfigOverrides::config(StringRef key) {
  auto it = values.find(key);
  if (it == values.end())
    return file ? file->config(key) : std::nullopt;
  it->second.read = true;
  return it->second.value;
}

std::vector<std::string> ConfigOverrides::unread() const {
  std::vector<std::string> keys;
  for (const std::string &key : order)
    if (!values.find(key)->second.read)
      keys.push_back(key);
  return keys;
}
