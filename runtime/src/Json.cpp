//===- Json.cpp - Bounded JSON parsing for untrusted input ------*- C++ -*-===//

#include "Json.h"

#include <fmt/format.h>


using json = nlohmann::json;

namespace tfm::rt {

namespace {

/// The deepest nesting of `[` and `{` outside strings, stopping early once it
/// exceeds `limit`. Malformed text is left for the parser to reject.
size_t nestingDepth(std::string_view text, size_t limit) {
  size_t depth = 0, deepest = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size() && deepest <= limit; ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
      continue;
    }
    switch (c) {
    case '"':
      inString = true;
      break;
    case '[':
    case '{':
      deepest = std::max(deepest, ++depth);
      break;
    case ']':
    case '}':
      depth = depth > 0 ? depth - 1 : 0;
      break;
    default:
      break;
    }
  }
  return deepest;
}

} // namespace

std::string printable(std::string_view text, size_t limit) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (out.size() >= limit) {
      out += "...";
      break;
    }
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f)
      out += fmt::format("\\x{:02x}", c);
    else
      out += static_cast<char>(c);
  }
  return out;
}

std::string describeJson(const json &value) {
  if (value.is_structured())
    return value.type_name();
  if (value.is_string())
    return "\"" + printable(value.get_ref<const std::string &>(), 32) + "\"";
  return value.dump();
}

bool parseBoundedJson(std::string_view text, json &out, std::string &error) {
  if (nestingDepth(text, kMaxJsonDepth) > kMaxJsonDepth) {
    error = fmt::format("nests deeper than {} levels", kMaxJsonDepth);
    return false;
  }
  out = json::parse(text.begin(), text.end(), /*cb=*/nullptr,
                    /*allow_exceptions=*/false);
  if (out.is_discarded()) {
    error = "is not valid JSON";
    return false;
  }
  return true;
}

} // namespace tfm::rt
