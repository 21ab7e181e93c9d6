//===- Weights.h - External weights of loaded models ------------*- C++ -*-===//
#ifndef TFM_RUNTIME_WEIGHTS_H
#define TFM_RUNTIME_WEIGHTS_H

#include "tfm/runtime.h"

#include <memory>
#include <string>

namespace tfm::rt {

/// Maps `path` and checks it against `manifestJson` (an artifact's
/// tfm_<m>_weights_manifest()).
tfm_status openWeights(const std::string &path, const char *manifestJson,
                       std::unique_ptr<tfm_weights_t> &out);

/// Opens and checks `path`, then binds it with `bind` unless this artifact
/// is bound already. `holder` keeps the binding (and the mapping) alive; the
/// last holder of an artifact's binding unbinds it.
tfm_status bindWeights(tfm_bind_weights_fn bind, const std::string &path,
                       const char *manifestJson, std::shared_ptr<void> &holder);

} // namespace tfm::rt

#endif // TFM_RUNTIME_WEIGHTS_H
