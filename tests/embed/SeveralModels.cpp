//===- SeveralModels.cpp - Three compiled models in one program -----------===//
//
// Links seed 003's multi-head attention (NAME heads) and seed 000's
// self-attention twice (NAME attention and attention_copy), runs them all at
// once on four threads (attention on two), many times, and checks every
// output against a float64 reference computed here from the weights. Usage:
//
//   tfm-embed-models <examples/seeds>
//
//===----------------------------------------------------------------------===//

#include "attention.h"
#include "attention_copy.h"
#include "heads.h"

#include "tfm/runtime.h"
#include "tfm/safetensors.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

static_assert(TFM_HEADS_API_VERSION == TFM_API_VERSION &&
                  TFM_ATTENTION_API_VERSION == TFM_API_VERSION &&
                  TFM_ATTENTION_COPY_API_VERSION == TFM_API_VERSION,
              "generated headers and tfm/runtime.h disagree");

namespace {

using Matrix = std::vector<double>; // row-major

/// A float weight of `file` as doubles, after checking its shape.
bool readWeight(const tfm::SafeTensorsFile &file, const char *name,
                int64_t rows, int64_t cols, Matrix &out) {
  const tfm::SafeTensorEntry *w = file.find(name);
  if (!w || w->dtype != "F32" || w->shape != std::vector<int64_t>{rows, cols}) {
    std::fprintf(stderr, "%s: no F32 weight '%s' of shape [%lld, %lld]\n",
                 file.path().c_str(), name, (long long)rows, (long long)cols);
    return false;
  }
  std::vector<float> data(rows * cols);
  std::memcpy(data.data(), w->data, w->byteSize);
  out.assign(data.begin(), data.end());
  return true;
}

/// a [n, k] @ b [k, m], with b read transposed ([m, k]) when `bT`.
Matrix matmul(const Matrix &a, const Matrix &b, int64_t n, int64_t k, int64_t m,
              bool bT) {
  Matrix c(n * m, 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j)
      for (int64_t p = 0; p < k; ++p)
        c[i * m + j] += a[i * k + p] * (bT ? b[j * k + p] : b[p * m + j]);
  return c;
}

/// softmax(q kᵀ · scale) v for q, k [s, d] and v [s, dv].
Matrix attention(const Matrix &q, const Matrix &k, const Matrix &v, int64_t s,
                 int64_t d, int64_t dv, double scale) {
  Matrix scores = matmul(q, k, s, d, s, /*bT=*/true);
  for (int64_t i = 0; i < s; ++i) {
    double *row = &scores[i * s];
    double max = -INFINITY, sum = 0;
    for (int64_t j = 0; j < s; ++j)
      max = std::fmax(max, row[j] * scale);
    for (int64_t j = 0; j < s; ++j)
      sum += row[j] = std::exp(row[j] * scale - max);
    for (int64_t j = 0; j < s; ++j)
      row[j] /= sum;
  }
  return matmul(scores, v, s, s, dv, /*bT=*/false);
}

/// Deterministic inputs in [-2, 2).
std::vector<float> inputs(size_t count, uint32_t seed) {
  std::vector<float> x(count);
  for (float &value : x) {
    seed = seed * 1664525u + 1013904223u;
    value = float(seed >> 8) / float(1u << 24) * 4.0f - 2.0f;
  }
  return x;
}

/// The largest |got - want| beyond 1e-5 + 1e-4 |want|, or 0 when all close.
double excess(const float *got, const Matrix &want) {
  double worst = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    double err = std::fabs(got[i] - want[i]);
    if (!(err <= 1e-5 + 1e-4 * std::fabs(want[i])))
      worst = std::fmax(worst, std::isnan(err) ? INFINITY : err);
  }
  return worst;
}

/// Seed 000 (embed-c/self_attention.tfm): y = attention(x Wqᵀ, x Wkᵀ, x Wvᵀ)
/// per batch, d_model = 2.
struct AttentionCase {
  static constexpr int64_t kBatch = 2, kSeq = 19, kDim = 2;
  std::vector<float> x = inputs(kBatch * kSeq * kDim, 7);
  Matrix y;

  bool prepare(const std::string &seeds) {
    std::string error;
    auto file = tfm::SafeTensorsFile::open(
        seeds + "/000_self_attention/weights.safetensors", error);
    Matrix wq, wk, wv;
    if (!file) {
      std::fprintf(stderr, "%s\n", error.c_str());
      return false;
    }
    if (!readWeight(*file, "W_q.weight", kDim, kDim, wq) ||
        !readWeight(*file, "W_k.weight", kDim, kDim, wk) ||
        !readWeight(*file, "W_v.weight", kDim, kDim, wv))
      return false;
    for (int64_t b = 0; b < kBatch; ++b) {
      Matrix xb(x.begin() + b * kSeq * kDim, x.begin() + (b + 1) * kSeq * kDim);
      Matrix yb = attention(matmul(xb, wq, kSeq, kDim, kDim, true),
                            matmul(xb, wk, kSeq, kDim, kDim, true),
                            matmul(xb, wv, kSeq, kDim, kDim, true), kSeq, kDim,
                            kDim, 1.0 / std::sqrt(2.0));
      y.insert(y.end(), yb.begin(), yb.end());
    }
    return true;
  }
};

/// Seed 003: six heads of attention(x wq, x wk, x wv) with [in, out] weights
/// [10, 8], concatenated and projected by `out` [48, 8]; head0 is an output.
struct HeadsCase {
  static constexpr int64_t kSeq = 23, kIn = 10, kHead = 8, kHeads = 6;
  std::vector<float> x = inputs(kSeq * kIn, 11);
  Matrix y, head0;

  bool prepare(const std::string &seeds) {
    std::string error;
    auto file = tfm::SafeTensorsFile::open(
        seeds + "/003_multi_head/weights.safetensors", error);
    if (!file) {
      std::fprintf(stderr, "%s\n", error.c_str());
      return false;
    }
    Matrix xd(x.begin(), x.end());
    Matrix concat(kSeq * kHeads * kHead);
    for (int64_t h = 0; h < kHeads; ++h) {
      std::string prefix = "heads." + std::to_string(h) + ".";
      Matrix wq, wk, wv;
      if (!readWeight(*file, (prefix + "wq").c_str(), kIn, kHead, wq) ||
          !readWeight(*file, (prefix + "wk").c_str(), kIn, kHead, wk) ||
          !readWeight(*file, (prefix + "wv").c_str(), kIn, kHead, wv))
        return false;
      Matrix head = attention(matmul(xd, wq, kSeq, kIn, kHead, false),
                              matmul(xd, wk, kSeq, kIn, kHead, false),
                              matmul(xd, wv, kSeq, kIn, kHead, false), kSeq,
                              kHead, kHead, 1.0 / std::sqrt(double(kHead)));
      if (h == 0)
        head0 = head;
      for (int64_t i = 0; i < kSeq; ++i)
        for (int64_t j = 0; j < kHead; ++j)
          concat[i * kHeads * kHead + h * kHead + j] = head[i * kHead + j];
    }
    Matrix out;
    if (!readWeight(*file, "out", kHeads * kHead, kHead, out))
      return false;
    y = matmul(concat, out, kSeq, kHeads * kHead, kHead, false);
    return true;
  }
};

/// Runs `run` `times` times; each run returns the worst excess over the
/// reference, or a negative value when the model returned non-zero.
bool repeat(const char *name, int times, const std::function<double()> &run) {
  for (int i = 0; i < times; ++i) {
    double worst = run();
    if (worst != 0) {
      if (worst < 0)
        std::fprintf(stderr, "%s: run %d returned an error\n", name, i);
      else
        std::fprintf(stderr, "%s: run %d is off the reference by %g\n", name, i,
                     worst);
      return false;
    }
  }
  std::printf("%s: %d runs match the reference\n", name, times);
  return true;
}

/// The model name the metadata reports, through the runtime.
bool checkName(const char *metadata, tfm_run_packed_fn entry,
               const char *expected) {
  tfm_model *model = nullptr;
  tfm_status status = tfm_model_create_from_symbols(metadata, entry, &model);
  bool ok = !status && std::strcmp(tfm_model_name(model), expected) == 0;
  if (!ok)
    std::fprintf(stderr, "model '%s': %s\n", expected,
                 status ? tfm_status_message(status) : tfm_model_name(model));
  tfm_status_free(status);
  tfm_model_release(model);
  return ok;
}

/// The linked model's workspace entry points through the runtime: its size
/// for seed 003's input agrees with the header's function, and runs in the
/// model's own workspaces and in the caller's give the reference.
bool checkRuntimeWorkspace(HeadsCase &heads) {
  tfm_model *model = nullptr;
  tfm_status status = tfm_model_create_from_symbols_with_workspace(
      tfm_heads_metadata(), tfm_heads_run_packed,
      tfm_heads_run_packed_with_workspace, tfm_heads_workspace_size_packed,
      &model);
  tfm_tensor x = {
      TFM_DTYPE_F32, 2, {HeadsCase::kSeq, HeadsCase::kIn}, heads.x.data()};
  std::vector<float> y(heads.y.size(), NAN), head0(heads.head0.size(), NAN);
  tfm_tensor outputs[] = {
      {TFM_DTYPE_F32, 2, {HeadsCase::kSeq, HeadsCase::kHead}, y.data()},
      {TFM_DTYPE_F32, 2, {HeadsCase::kSeq, HeadsCase::kHead}, head0.data()}};
  int64_t bytes = -1;
  if (!status)
    status = tfm_model_workspace_size(model, &x, 1, &bytes);
  bool ok = !status && bytes == tfm_heads_workspace_size(HeadsCase::kSeq);
  if (ok)
    status = tfm_model_run(model, &x, 1, outputs, 2);
  ok = ok && !status && excess(y.data(), heads.y) <= 0 &&
       excess(head0.data(), heads.head0) <= 0;
  void *workspace = ok && bytes > 0
                        ? std::aligned_alloc(TFM_WORKSPACE_ALIGNMENT,
                                             size_t(bytes + 63) / 64 * 64)
                        : nullptr;
  if (ok) {
    std::fill(y.begin(), y.end(), NAN);
    status = tfm_model_run_with_workspace(model, &x, 1, outputs, 2, nullptr,
                                          workspace, bytes);
    ok = !status && excess(y.data(), heads.y) <= 0;
  }
  if (!ok)
    std::fprintf(stderr,
                 "heads through the runtime with workspaces: %s "
                 "(workspace %lld bytes)\n",
                 status ? tfm_status_message(status) : "wrong results",
                 static_cast<long long>(bytes));
  std::free(workspace);
  tfm_status_free(status);
  tfm_model_release(model);
  return ok;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <examples/seeds>\n", argv[0]);
    return 2;
  }
  AttentionCase attn;
  HeadsCase heads;
  if (!attn.prepare(argv[1]) || !heads.prepare(argv[1]))
    return 2;
  if (!checkName(tfm_heads_metadata(), tfm_heads_run_packed, "heads") ||
      !checkName(tfm_attention_metadata(), tfm_attention_run_packed,
                 "attention") ||
      !checkName(tfm_attention_copy_metadata(), tfm_attention_copy_run_packed,
                 "attention_copy") ||
      !checkRuntimeWorkspace(heads))
    return 1;

  using AttentionRun = int32_t (*)(const float *, float *, int64_t, int64_t);
  auto attentionRun = [&](AttentionRun run) {
    return [&attn, run] {
      std::vector<float> y(attn.y.size(), NAN);
      if (run(attn.x.data(), y.data(), AttentionCase::kBatch,
              AttentionCase::kSeq) != 0)
        return -1.0;
      return excess(y.data(), attn.y);
    };
  };
  auto headsRun = [&] {
    std::vector<float> y(heads.y.size(), NAN), head0(heads.head0.size(), NAN);
    if (tfm_heads_run(heads.x.data(), y.data(), head0.data(),
                      HeadsCase::kSeq) != 0)
      return -1.0;
    return std::fmax(excess(y.data(), heads.y),
                     excess(head0.data(), heads.head0));
  };

  // The typed entry point in a workspace of the thread's own, sized with the
  // header's function.
  int64_t headsBytes = tfm_heads_workspace_size(HeadsCase::kSeq);
  if (headsBytes < 0)
    return 1;
  std::vector<float> headsWorkspaceStorage(size_t(headsBytes) / sizeof(float) +
                                           TFM_HEADS_WORKSPACE_ALIGNMENT);
  void *headsWorkspace = headsWorkspaceStorage.data();
  size_t space = headsWorkspaceStorage.size() * sizeof(float);
  if (!std::align(TFM_HEADS_WORKSPACE_ALIGNMENT, size_t(headsBytes),
                  headsWorkspace, space))
    return 1;
  auto headsInWorkspace = [&] {
    std::vector<float> y(heads.y.size(), NAN), head0(heads.head0.size(), NAN);
    if (tfm_heads_run_with_workspace(heads.x.data(), y.data(), head0.data(),
                                     HeadsCase::kSeq, headsWorkspace,
                                     headsBytes) != 0)
      return -1.0;
    return std::fmax(excess(y.data(), heads.y),
                     excess(head0.data(), heads.head0));
  };

  // Side by side: the three models run at the same time, each on a thread.
  constexpr int kRuns = 50;
  std::atomic<bool> ok{true};
  std::vector<std::thread> threads;
  auto launch = [&](const char *name, std::function<double()> run) {
    threads.emplace_back([&ok, name, run] {
      if (!repeat(name, kRuns, run))
        ok = false;
    });
  };
  launch("heads", headsRun);
  launch("heads (caller's workspace)", headsInWorkspace);
  launch("attention", attentionRun(tfm_attention_run));
  // Runs are reentrant: one model on two threads at once.
  launch("attention (second thread)", attentionRun(tfm_attention_run));
  launch("attention_copy", attentionRun(tfm_attention_copy_run));
  for (std::thread &t : threads)
    t.join();
  std::printf("%s\n", ok ? "all models ok" : "FAILED");
  return ok ? 0 : 1;
}
