//===- Json.h - Bounded JSON parsing for untrusted input --------*- C++ -*-===//
//
// Safetensors headers and artifact metadata come from files anyone can write.
// nlohmann's dump() and copies recurse once per nesting level, so a document
// nested a million levels deep overflows the stack. parseBoundedJson() refuses
// such documents before nlohmann sees them, and refuses objects that repeat a
// key (nlohmann would silently keep the last one); describeJson() never dumps
// more than a scalar.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_RUNTIME_JSON_H
#define TFM_RUNTIME_JSON_H

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace tfm::rt {

/// The deepest nesting of arrays and objects the runtime accepts. Metadata
/// and safetensors headers need 3.
constexpr size_t kMaxJsonDepth = 16;

/// Parses `text` into `out`. On failure returns false and sets `error` to a
/// one-line predicate for the caller to put a subject in front of: "is not
/// valid JSON", "nests deeper than 16 levels" or "repeats the key 'k' in one
/// object".
bool parseBoundedJson(std::string_view text, nlohmann::json &out,
                      std::string &error);

/// A short description of `value` for messages: scalars as JSON (strings cut
/// to a few dozen characters), arrays and objects by their type name.
std::string describeJson(const nlohmann::json &value);

/// `text` for a message: at most `limit` characters, control characters
/// escaped, so that a message stays on one line.
std::string printable(std::string_view text, size_t limit = 64);

} // namespace tfm::rt

#endif // TFM_RUNTIME_JSON_H
