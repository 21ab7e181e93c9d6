//===- DeviceTensors.h - A GPU model's tensors in device memory -*- C++ -*-===//
//
// tfm-run keeps .npy data on the host; a GPU artifact (tfm_model_device
// "cuda") reads and writes device memory. These are the device mirrors: the
// inputs copied in once, the outputs (and caches, which a run updates in
// place) copied back after a run.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_TOOLS_TFM_RUN_DEVICETENSORS_H
#define TFM_TOOLS_TFM_RUN_DEVICETENSORS_H

#include "tfm/runtime.h"

#include <vector>

namespace tfm::run {

class DeviceTensors {
public:
  DeviceTensors() = default;
  DeviceTensors(const DeviceTensors &) = delete;
  DeviceTensors &operator=(const DeviceTensors &) = delete;
  ~DeviceTensors();

  /// Allocates device buffers shaped like `hostInputs` and `hostOutputs`
  /// and copies the inputs in.
  tfm_status create(const std::vector<tfm_tensor> &hostInputs,
                    const std::vector<tfm_tensor> &hostOutputs);

  /// Runs the model on the device tensors; `*outMilliseconds` is the device
  /// time between events around the run.
  tfm_status run(const tfm_model *model, double *outMilliseconds);

  /// Copies every output back into `hostOutputs`.
  tfm_status copyOutputs(std::vector<tfm_tensor> &hostOutputs) const;

  /// Copies input `index` back into `hostInput`: a cache the run appended
  /// to on the device.
  tfm_status copyInput(size_t index, tfm_tensor &hostInput) const;

private:
  std::vector<tfm_tensor> inputs, outputs;
  std::vector<void *> owned;
};

} // namespace tfm::run

#endif // TFM_TOOLS_TFM_RUN_DEVICETENSORS_H
