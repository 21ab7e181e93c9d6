//===- DeviceTensors.cpp - A GPU model's tensors in device memory ---------===//
#include "DeviceTensors.h"

namespace tfm::run {

namespace {
tfm_status mirror(const tfm_tensor &host, tfm_tensor &device,
                  std::vector<void *> &owned) {
  device = host;
  device.data = nullptr;
  int64_t bytes = tfm_tensor_byte_size(&host);
  if (tfm_status status =
          tfm_gpu_alloc(static_cast<size_t>(bytes), &device.data))
    return status;
  owned.push_back(device.data);
  return nullptr;
}
} // namespace

DeviceTensors::~DeviceTensors() {
  for (void *ptr : owned)
    tfm_gpu_free(ptr);
}

tfm_status DeviceTensors::create(const std::vector<tfm_tensor> &hostInputs,
                                 const std::vector<tfm_tensor> &hostOutputs) {
  if (tfm_status status = tfm_gpu_init())
    return status;
  inputs.resize(hostInputs.size());
  outputs.resize(hostOutputs.size());
  for (size_t i = 0; i < hostInputs.size(); ++i) {
    const tfm_tensor &host = hostInputs[i];
    int64_t bytes = tfm_tensor_byte_size(&host);
    if (tfm_status status = mirror(host, inputs[i], owned))
      return status;
    if (tfm_status status = tfm_gpu_copy_to_device(inputs[i].data, host.data,
                                                   static_cast<size_t>(bytes)))
      return status;
  }
  for (size_t o = 0; o < hostOutputs.size(); ++o)
    if (tfm_status status = mirror(hostOutputs[o], outputs[o], owned))
      return status;
  return nullptr;
}

tfm_status DeviceTensors::run(const tfm_model *model, double *outMilliseconds) {
  tfm_gpu_timer *timer = nullptr;
  if (tfm_status status = tfm_gpu_timer_start(&timer))
    return status;
  tfm_status status = tfm_model_run(model, inputs.data(), inputs.size(),
                                    outputs.data(), outputs.size());
  double ms = 0;
  tfm_status timed = tfm_gpu_timer_stop(timer, &ms);
  if (status) {
    tfm_status_free(timed);
    return status;
  }
  if (timed)
    return timed;
  *outMilliseconds = ms;
  return nullptr;
}

tfm_status
DeviceTensors::copyOutputs(std::vector<tfm_tensor> &hostOutputs) const {
  for (size_t o = 0; o < outputs.size(); ++o)
    if (tfm_status status = tfm_gpu_copy_to_host(
            hostOutputs[o].data, outputs[o].data,
            static_cast<size_t>(tfm_tensor_byte_size(&outputs[o]))))
      return status;
  return nullptr;
}

tfm_status DeviceTensors::copyInput(size_t index, tfm_tensor &hostInput) const {
  return tfm_gpu_copy_to_host(
      hostInput.data, inputs[index].data,
      static_cast<size_t>(tfm_tensor_byte_size(&inputs[index])));
}

} // namespace tfm::run
