//===- main.cpp - A compiled model inside a CMake-built C++ app -----------===//
//
// Runs seed 004's multi-head self-attention (compiled at build time by
// tfm_add_model into mha.h + an object) on a [2, 33, 512] input, checks the
// output against a naive float64 loop over the same weights, then runs it
// again on the runtime's thread pool and checks that nothing changed.
//
//   embed-cmake [weights.safetensors]
//
//===----------------------------------------------------------------------===//

#include "mha.h" // generated: tfm_mha_run, TFM_MHA_* macros

#include "tfm/runtime.h"
#include "tfm/safetensors.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

// The generated header and the runtime must come from the same ABI.
static_assert(TFM_MHA_API_VERSION == TFM_API_VERSION,
              "mha.h and tfm/runtime.h are from different tfm releases");

namespace {

constexpr int64_t kBatch = 2, kSeq = 33, kModel = 512, kHeads = 8;
constexpr int64_t kHead = kModel / kHeads;

/// One of the model's F32 weights as doubles; empty when it is missing or
/// has another size.
std::vector<double> weight(const tfm::SafeTensorsFile &file, const char *name,
                           size_t elements) {
  const tfm::SafeTensorEntry *w = file.find(name);
  if (!w || w->dtype != "F32" || w->byteSize != elements * sizeof(float)) {
    std::fprintf(stderr, "%s: no F32 tensor '%s' of %zu elements\n",
                 file.path().c_str(), name, elements);
    return {};
  }
  std::vector<float> data(elements);
  std::memcpy(data.data(), w->data, w->byteSize); // safetensors: unaligned
  return {data.begin(), data.end()};
}

/// x [rows, 512] W^T + b, with PyTorch's [out, in] W.
std::vector<double> linear(const std::vector<double> &x,
                           const std::vector<double> &w,
                           const std::vector<double> &b) {
  int64_t rows = int64_t(x.size()) / kModel;
  std::vector<double> y(rows * kModel);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < kModel; ++o) {
      double sum = b[o];
      for (int64_t i = 0; i < kModel; ++i)
        sum += x[r * kModel + i] * w[o * kModel + i];
      y[r * kModel + o] = sum;
    }
  return y;
}

/// The model in plain loops: project, attend per batch and head with
/// softmax(q k^T / sqrt(64)), merge the heads, project.
bool reference(const tfm::SafeTensorsFile &file, const std::vector<float> &x,
               std::vector<double> &out) {
  const size_t matrix = kModel * kModel;
  std::vector<double> wq = weight(file, "linear_q.weight", matrix),
                      bq = weight(file, "linear_q.bias", kModel),
                      wk = weight(file, "linear_k.weight", matrix),
                      bk = weight(file, "linear_k.bias", kModel),
                      wv = weight(file, "linear_v.weight", matrix),
                      bv = weight(file, "linear_v.bias", kModel),
                      wo = weight(file, "linear_concat.weight", matrix),
                      bo = weight(file, "linear_concat.bias", kModel);
  for (const auto *w : {&wq, &bq, &wk, &bk, &wv, &bv, &wo, &bo})
    if (w->empty())
      return false;
  std::vector<double> xd(x.begin(), x.end());
  std::vector<double> q = linear(xd, wq, bq), k = linear(xd, wk, bk),
                      v = linear(xd, wv, bv);
  std::vector<double> heads(xd.size()), p(kSeq);
  for (int64_t b = 0; b < kBatch; ++b)
    for (int64_t h = 0; h < kHeads; ++h)
      for (int64_t i = 0; i < kSeq; ++i) {
        auto at = [&](const std::vector<double> &t, int64_t s, int64_t d) {
          return t[(b * kSeq + s) * kModel + h * kHead + d];
        };
        double max = -INFINITY, sum = 0;
        for (int64_t j = 0; j < kSeq; ++j) {
          p[j] = 0;
          for (int64_t d = 0; d < kHead; ++d)
            p[j] += at(q, i, d) * at(k, j, d);
          p[j] /= std::sqrt(double(kHead));
          max = std::fmax(max, p[j]);
        }
        for (int64_t j = 0; j < kSeq; ++j)
          sum += p[j] = std::exp(p[j] - max);
        for (int64_t d = 0; d < kHead; ++d) {
          double o = 0;
          for (int64_t j = 0; j < kSeq; ++j)
            o += p[j] / sum * at(v, j, d);
          heads[(b * kSeq + i) * kModel + h * kHead + d] = o;
        }
      }
  out = linear(heads, wo, bo);
  return true;
}

/// Prints a failed runtime call; true when `status` is OK.
bool ok(tfm_status status) {
  if (!status)
    return true;
  std::fprintf(stderr, "embed-cmake: %s\n", tfm_status_message(status));
  tfm_status_free(status);
  return false;
}

} // namespace

int main(int argc, char **argv) {
  std::string path = argc > 1 ? argv[1] : EMBED_WEIGHTS;
  std::printf("tfm %s, API version %d\n", tfm_version(), TFM_API_VERSION);
  if (tfm_api_version() != TFM_API_VERSION) {
    std::fprintf(stderr,
                 "embed-cmake: the runtime library has API version "
                 "%d, its header %d\n",
                 tfm_api_version(), TFM_API_VERSION);
    return 1;
  }

  // Deterministic inputs in [-1, 1).
  std::vector<float> x(TFM_MHA_X_COUNT(kBatch, kSeq));
  uint32_t state = 2024;
  for (float &value : x) {
    state = state * 1664525u + 1013904223u;
    value = float(state >> 8) / float(1 << 23) - 1.0f;
  }

  // The generated entry point: inputs, outputs, then the named dimensions.
  std::vector<float> attn(TFM_MHA_ATTN_COUNT(kBatch, kSeq));
  if (int32_t rc = tfm_mha_run(x.data(), attn.data(), kBatch, kSeq)) {
    std::fprintf(stderr, "embed-cmake: tfm_mha_run returned %d\n", rc);
    return 1;
  }

  std::string error;
  auto weights = tfm::SafeTensorsFile::open(path, error);
  std::vector<double> expected;
  if (!weights) {
    std::fprintf(stderr, "embed-cmake: %s\n", error.c_str());
    return 1;
  }
  if (!reference(*weights, x, expected))
    return 1;
  double worst = 0;
  size_t worstAt = 0;
  bool close = true;
  for (size_t i = 0; i < attn.size(); ++i) {
    double err = std::fabs(attn[i] - expected[i]);
    close = close && err <= 1e-5 + 1e-4 * std::fabs(expected[i]);
    if (!(err <= worst)) {
      worst = err;
      worstAt = i;
    }
  }
  std::printf("mha: attn[%lld, %lld, %lld] = %.6f ..., max abs error vs. a "
              "float64 loop %.2e at %zu: %s\n",
              (long long)kBatch, (long long)kSeq, (long long)kModel, attn[0],
              worst, worstAt, close ? "ok" : "MISMATCH");
  if (!close)
    return 1;

  // Through the runtime: the statically linked model as a tfm_model, run on
  // a pool of two threads (the calling thread and one worker).
  tfm_model *model = nullptr;
  tfm_thread_pool *pool = nullptr;
  tfm_tensor input = {TFM_DTYPE_F32, 3, {kBatch, kSeq, kModel}, x.data()};
  std::vector<float> pooled(attn.size());
  tfm_tensor output = {TFM_DTYPE_F32, 3, {kBatch, kSeq, kModel}, pooled.data()};
  bool ran = ok(tfm_model_create_from_symbols(tfm_mha_metadata(),
                                              tfm_mha_run_packed, &model)) &&
             ok(tfm_thread_pool_create(2, &pool)) &&
             ok(tfm_model_run_with_exec(model, &input, 1, &output, 1,
                                        tfm_thread_pool_exec(pool)));
  tfm_thread_pool_release(pool);
  tfm_model_release(model);
  if (!ran)
    return 1;
  bool same =
      std::memcmp(pooled.data(), attn.data(), attn.size() * sizeof(float)) == 0;
  std::printf("mha on a 2-thread tfm_thread_pool: %s\n",
              same ? "same output" : "DIFFERENT output");
  return same ? 0 : 1;
}
