//===- ModelState.h - What a loaded model holds ------------------*- C++
//-*-===//
//
// tfm_model's definition, shared by loading (Model.cpp) and running
// (ModelRun.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_MODELSTATE_H
#define TFM_RUNTIME_MODELSTATE_H

#include "Library.h"
#include "Signature.h"
#include "tfm/runtime.h"
#include "tfm/tokenizer.h"

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace tfm::rt {

/// A buffer's byte range, to find outputs that overlap other buffers.
struct Extent {
  const char *kind;
  const std::string *name;
  uintptr_t begin, end;
};

/// What one run needs besides the tensors: the model's workspace and the
/// runtime's own arrays, kept from run to run so that a run whose shapes do
/// not grow allocates nothing.
struct RunSlot {
  void *workspace = nullptr;
  int64_t workspaceBytes = 0;
  std::vector<int64_t> symbolValues;
  std::vector<void *> buffers;
  std::vector<Extent> extents;

  RunSlot() = default;
  RunSlot(const RunSlot &) = delete;
  RunSlot &operator=(const RunSlot &) = delete;
  ~RunSlot() { std::free(workspace); }

  /// Makes the workspace hold at least `bytes`; false when it cannot.
  bool reserve(int64_t bytes) {
    if (bytes <= workspaceBytes)
      return true;
    std::free(workspace);
    workspace = nullptr;
    workspaceBytes = 0;
    // aligned_alloc wants a multiple of the alignment.
    auto rounded = static_cast<size_t>(bytes) + (TFM_WORKSPACE_ALIGNMENT - 1);
    rounded -= rounded % TFM_WORKSPACE_ALIGNMENT;
    workspace = std::aligned_alloc(TFM_WORKSPACE_ALIGNMENT, rounded);
    if (!workspace)
      return false;
    workspaceBytes = static_cast<int64_t>(rounded);
    return true;
  }
};

/// The status of a NULL `argument` to `function`.
tfm_status nullArgument(const char *function, const char *argument);

} // namespace tfm::rt

struct tfm_model_t {
  tfm::rt::Signature signature;
  /// Null for a model made from symbols linked into the program.
  std::unique_ptr<tfm::rt::Library> library;
  tfm_run_packed_fn entry = nullptr;
  /// Null for artifacts without them (tfm_model_create_from_symbols).
  tfm_run_packed_workspace_fn entryWithWorkspace = nullptr;
  tfm_workspace_size_fn workspaceSize = nullptr;
  /// The binding of external weights, shared by every model of the
  /// artifact. Declared after `library`, so released before it closes.
  std::shared_ptr<void> weights;
  /// The artifact's embedded tokenizer, loaded by tfm_model_tokenizer.
  struct TokenizerDeleter {
    void operator()(tfm_tokenizer *t) const { tfm_tokenizer_release(t); }
  };
  mutable std::mutex tokenizerMutex;
  mutable std::unique_ptr<tfm_tokenizer, TokenizerDeleter> tokenizer;

  /// Slots not in use by a run. Runs are concurrent, so the model hands each
  /// its own and keeps as many as ever ran at once; a run's slot returns
  /// here, so the vector's capacity settles and pushing allocates nothing.
  mutable std::mutex slotsMutex;
  mutable std::vector<std::unique_ptr<tfm::rt::RunSlot>> freeSlots;

  std::unique_ptr<tfm::rt::RunSlot> takeSlot() const {
    {
      std::lock_guard<std::mutex> lock(slotsMutex);
      if (!freeSlots.empty()) {
        std::unique_ptr<tfm::rt::RunSlot> slot = std::move(freeSlots.back());
        freeSlots.pop_back();
        return slot;
      }
    }
    return std::make_unique<tfm::rt::RunSlot>();
  }

  void giveBack(std::unique_ptr<tfm::rt::RunSlot> slot) const {
    std::lock_guard<std::mutex> lock(slotsMutex);
    freeSlots.push_back(std::move(slot));
  }
};

#endif // TFM_RUNTIME_MODELSTATE_H
