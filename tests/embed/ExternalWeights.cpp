//===- ExternalWeights.cpp - A linked model with external weights ---------===//
//
// tfm_add_model(... WEIGHTS_MODE external): the object holds no weights; the
// app maps the sidecar with tfm_weights_open, which checks it against the
// model's manifest, and binds it. The results equal those of the same model
// with embedded weights, linked next to it; the seed's own .safetensors (not
// the file the model was compiled into) is refused by name.
//
//===----------------------------------------------------------------------===//

#include "attention.h"
#include "attention_external.h"
#include "tfm/runtime.h"

#include <cstdio>
#include <cstring>
#include <vector>

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s SIDECAR OTHER.safetensors\n", argv[0]);
    return 2;
  }
  const int64_t batch = 2, seq = 5;
  std::vector<float> x(TFM_ATTENTION_X_COUNT(batch, seq));
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = float(int(i * 7 % 11) - 5) / 4.0f;
  std::vector<float> want(TFM_ATTENTION_Y_COUNT(batch, seq));
  std::vector<float> got(want.size());
  if (tfm_attention_run(x.data(), want.data(), batch, seq) != 0)
    return 1;
  if (tfm_attention_external_run(x.data(), got.data(), batch, seq) != -6) {
    std::fprintf(stderr, "an unbound model ran\n");
    return 1;
  }

  tfm_weights *wrong = nullptr;
  tfm_status status = tfm_weights_open(
      argv[2], tfm_attention_external_weights_manifest(), &wrong);
  if (!status || !std::strstr(tfm_status_message(status), "has no tensor")) {
    std::fprintf(stderr, "%s was not refused: %s\n", argv[2],
                 status ? tfm_status_message(status) : "(no error)");
    return 1;
  }
  std::printf("refused: %s\n", tfm_status_message(status));
  tfm_status_free(status);

  tfm_weights *weights = nullptr;
  status = tfm_weights_open(argv[1], tfm_attention_external_weights_manifest(),
                            &weights);
  if (status) {
    std::fprintf(stderr, "%s\n", tfm_status_message(status));
    return 1;
  }
  int32_t rc = tfm_attention_external_bind_weights(tfm_weights_data(weights),
                                                   tfm_weights_size(weights));
  if (rc == 0)
    rc = tfm_attention_external_run(x.data(), got.data(), batch, seq);
  tfm_attention_external_bind_weights(nullptr, 0);
  tfm_weights_release(weights);
  if (rc != 0) {
    std::fprintf(stderr, "the external-weights model returned %d\n", rc);
    return 1;
  }
  if (std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) != 0) {
    std::fprintf(stderr, "external and embedded weights disagree\n");
    return 1;
  }
  std::printf("external weights: the same %zu values as embedded ones\n",
              got.size());
  return 0;
}
