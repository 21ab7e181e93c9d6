//===- Json.cpp - Bounded JSON parsing for untrusted input ------*- C++ -*-===//

#include "Json.h"

#include <fmt/format.h>

#include <set>
#include <vector>

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
  // The keys seen in each object being parsed, innermost last.
  std::vector<std::set<std::string>> keys;
  std::string duplicate;
  auto callback = [&](int, json::parse_event_t event, json &parsed) {
    switch (event) {
    case json::parse_event_t::object_start:
      keys.emplace_back();
      break;
    case json::parse_event_t::object_end:
      if (!keys.empty())
        keys.pop_back();
      break;
    case json::parse_event_t::key:
      if (!keys.empty() && duplicate.empty() &&
          !keys.back().insert(parsed.get<std::string>()).second)
        duplicate = parsed.get<std::string>();
      break;
    default:
      break;
    }
    return true;
  };
  out = json::parse(text.begin(), text.end(), callback,
                    /*allow_exceptions=*/false);
  if (out.is_discarded()) {
    error = "is not valid JSON";
    return false;
  }
  if (!duplicate.empty()) {
    error =
        fmt::format("repeats the key '{}' in one object", printable(duplicate));
    return false;
  }
  return true;
}

} // namespace tfm::rt
