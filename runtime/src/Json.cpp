//===- Json.cpp - Bounded JSON parsing for untrusted input ------*- C++ -*-===//

#include "Json.h"

#include <fmt/format.h>

#include <optional>
#include <unordered_set>
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

/// Finds the first key repeated in one object, in one linear pass: the DOM
/// parser's callback, which could see keys too, rescans the enclosing object
/// whenever a value ends (quadratic in its keys: 50000 tensors took 21 s).
class DuplicateKeyFinder : public nlohmann::json_sax<json> {
public:
  /// The first repeated key, when found (the empty key counts).
  std::optional<std::string> duplicate;

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t &) override { return true; }
  bool string(string_t &) override { return true; }
  bool binary(binary_t &) override { return true; }
  bool start_object(std::size_t) override {
    keys.emplace_back();
    return true;
  }
  bool key(string_t &key) override {
    if (keys.empty() || keys.back().insert(key).second)
      return true;
    duplicate = key;
    return false; // Stops the pass.
  }
  bool end_object() override {
    if (!keys.empty())
      keys.pop_back();
    return true;
  }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string &,
                   const nlohmann::detail::exception &) override {
    return false; // The DOM parse reports it.
  }

private:
  // The keys of each object being parsed, innermost last.
  std::vector<std::unordered_set<std::string>> keys;
};

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
  DuplicateKeyFinder finder;
  json::sax_parse(text.begin(), text.end(), &finder,
                  nlohmann::detail::input_format_t::json, /*strict=*/true);
  out = json::parse(text.begin(), text.end(), nullptr,
                    /*allow_exceptions=*/false);
  if (out.is_discarded()) {
    error = "is not valid JSON";
    return false;
  }
  if (finder.duplicate) {
    error = fmt::format("repeats the key '{}' in one object",
                        printable(*finder.duplicate));
    return false;
  }
  return true;
}

} // namespace tfm::rt
