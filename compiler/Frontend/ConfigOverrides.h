//===- ConfigOverrides.h - config() keys set by the user --------*- C++ -*-===//
#ifndef TFM_COMPILER_FRONTEND_CONFIGOVERRIDES_H
#define TFM_COMPILER_FRONTEND_CONFIGOVERRIDES_H

#include "compiler/Frontend/ModelBuilder.h"

#include "llvm/ADT/StringMap.h"

#include <string>
#include <vector>

namespace mlir::tfm {

/// The config() keys a user sets with `tfm-compile --set KEY=VALUE`, in
/// front of the weights file's metadata: a model's own knobs (the cache
/// capacity of examples/llama) and corrections of a checkpoint's metadata,
/// as llama.cpp's --override-kv. Weights come from `file` (may be null).
class ConfigOverrides : public WeightShapes {
public:
  explicit ConfigOverrides(WeightShapes *file) : file(file) {}

  /// Adds "KEY=VALUE": `true`/`false` is a boolean, a decimal number a
  /// number, anything else a string. Fails with `error` set on a missing
  /// key or '=', or a key set twice.
  LogicalResult add(StringRef assignment, std::string &error);

  std::optional<Info> lookup(MLIRContext *ctx, StringRef name) override {
    return file ? file->lookup(ctx, name) : std::nullopt;
  }
  std::optional<ConfigValue> config(StringRef key) override;
  std::string configSource() const override {
    return file ? file->configSource() : "";
  }
  bool remarksOnDefaults() const override {
    return remarks || (file && file->remarksOnDefaults());
  }

  /// The keys set but never read by the model's config() calls, in the
  /// order given: most likely misspelled.
  std::vector<std::string> unread() const;

  bool remarks = false;

private:
  struct Entry {
    ConfigValue value;
    bool read = false;
  };
  WeightShapes *file;
  llvm::StringMap<Entry> values;
  std::vector<std::string> order;
};

} // namespace mlir::tfm

#endif // TFM_COMPILER_FRONTEND_CONFIGOVERRIDES_H
