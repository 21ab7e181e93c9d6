//===- ReferenceHuggingFace.cpp - float64 BertModel and GPT2LMHeadModel ---===//
#include "ReferenceHuggingFace.h"
#include "ReferenceLayers.h"
#include "ReferenceMath.h"

#include "tfm/safetensors.h"

#include <cmath>
#include <cstring>
#include <stdexcept>

namespace ref {

std::map<std::string, Array> readCheckpoint(const std::string &path) {
  std::string error;
  std::unique_ptr<tfm::SafeTensorsFile> file =
      tfm::SafeTensorsFile::open(path, error);
  if (!file)
    throw std::runtime_error(error);
  std::map<std::string, Array> out;
  for (const tfm::SafeTensorEntry &entry : file->entries()) {
    if (entry.dtype != "F32")
      throw std::runtime_error(path + ": " + entry.name + " is not F32");
    std::vector<float> values(entry.byteSize / sizeof(float));
    std::memcpy(values.data(), entry.data, entry.byteSize);
    out[entry.name] = fromFloats(entry.shape, values);
  }
  return out;
}

namespace {
const Array &get(const std::map<std::string, Array> &w,
                 const std::string &name) {
  auto it = w.find(name);
  if (it == w.end())
    throw std::runtime_error("checkpoint has no tensor " + name);
  return it->second;
}

/// [B, S, H * D] -> [B, H, S, D]
Array splitHeads(const Array &x, int64_t heads) {
  int64_t b = x.dim(0), s = x.dim(1), e = x.dim(2);
  return permute(reshape(x, {b, s, heads, e / heads}), {0, 2, 1, 3});
}

/// [B, H, S, D] -> [B, S, H * D]
Array mergeHeads(const Array &x) {
  int64_t b = x.dim(0), h = x.dim(1), s = x.dim(2), d = x.dim(3);
  return reshape(permute(x, {0, 2, 1, 3}), {b, s, h * d});
}

/// The learned positions 0..seq-1 of a [max, H] table, [seq, H].
Array positions(const Array &table, int64_t seq) {
  return slice(table, 0, 0, seq);
}
} // namespace

BertOutputs bertModel(const std::map<std::string, Array> &w,
                      const TransformerConfig &config, int64_t batch,
                      int64_t seq, const std::vector<int64_t> &ids,
                      const std::vector<int64_t> &types,
                      const std::vector<int64_t> &mask) {
  auto W = [&](const std::string &name) -> const Array & {
    return get(w, name);
  };
  auto lin = [&](const Array &x, const std::string &p) {
    return linear(x, W(p + ".weight"), &W(p + ".bias"));
  };
  auto norm = [&](const Array &x, const std::string &p) {
    return layerNorm(x, &W(p + ".weight"), &W(p + ".bias"), config.eps);
  };
  std::vector<int64_t> shape = {batch, seq};
  Array x =
      add(add(embedding(shape, ids, W("embeddings.word_embeddings.weight")),
              embedding(shape, types,
                        W("embeddings.token_type_embeddings.weight"))),
          positions(W("embeddings.position_embeddings.weight"), seq));
  x = norm(x, "embeddings.LayerNorm");

  int64_t heads = config.heads;
  AttentionMask padding;
  padding.masked = [&](int64_t n, int64_t, int64_t j) {
    return mask[size_t((n / heads) * seq + j)] == 0;
  };
  for (int64_t l = 0; l < config.layers; ++l) {
    std::string p = "encoder.layer." + std::to_string(l);
    Array q = splitHeads(lin(x, p + ".attention.self.query"), heads);
    Array k = splitHeads(lin(x, p + ".attention.self.key"), heads);
    Array v = splitHeads(lin(x, p + ".attention.self.value"), heads);
    Array context = mergeHeads(
        maskedAttention(q, k, v, 1.0 / std::sqrt(double(q.dim(-1))), padding));
    x = norm(add(x, lin(context, p + ".attention.output.dense")),
             p + ".attention.output.LayerNorm");
    Array inner = gelu(lin(x, p + ".intermediate.dense"));
    x = norm(add(x, lin(inner, p + ".output.dense")), p + ".output.LayerNorm");
  }

  BertOutputs out;
  out.lastHiddenState = x;
  out.poolerOutput = map(lin(select(x, 1, 0), "pooler.dense"),
                         [](double v) { return std::tanh(v); });
  int64_t hidden = x.dim(2);
  Array sentence({batch, hidden});
  for (int64_t b = 0; b < batch; ++b) {
    double count = 0, norm2 = 0;
    for (int64_t s = 0; s < seq; ++s)
      if (mask[size_t(b * seq + s)] != 0) {
        count += 1;
        for (int64_t c = 0; c < hidden; ++c)
          sentence.data[size_t(b * hidden + c)] +=
              x.data[size_t((b * seq + s) * hidden + c)];
      }
    for (int64_t c = 0; c < hidden; ++c) {
      double &value = sentence.data[size_t(b * hidden + c)];
      value /= std::max(count, 1e-9);
      norm2 += value * value;
    }
    for (int64_t c = 0; c < hidden; ++c)
      sentence.data[size_t(b * hidden + c)] /=
          std::max(std::sqrt(norm2), 1e-12);
  }
  out.sentenceEmbedding = sentence;
  return out;
}

Array gpt2LMHeadModel(const std::map<std::string, Array> &w,
                      const TransformerConfig &config, int64_t batch,
                      int64_t seq, const std::vector<int64_t> &ids) {
  auto W = [&](const std::string &name) -> const Array & {
    return get(w, name);
  };
  // Conv1D: the weight is [in, out], y = x W + b.
  auto conv1d = [&](const Array &x, const std::string &p) {
    return add(matmul(x, W(p + ".weight")), W(p + ".bias"));
  };
  auto norm = [&](const Array &x, const std::string &p) {
    return layerNorm(x, &W(p + ".weight"), &W(p + ".bias"), config.eps);
  };
  const Array &wte = W("transformer.wte.weight");
  Array x = add(embedding({batch, seq}, ids, wte),
                positions(W("transformer.wpe.weight"), seq));
  int64_t hidden = x.dim(2);
  for (int64_t l = 0; l < config.layers; ++l) {
    std::string p = "transformer.h." + std::to_string(l);
    Array qkv = conv1d(norm(x, p + ".ln_1"), p + ".attn.c_attn");
    Array q = splitHeads(slice(qkv, 2, 0, hidden), config.heads);
    Array k = splitHeads(slice(qkv, 2, hidden, 2 * hidden), config.heads);
    Array v = splitHeads(slice(qkv, 2, 2 * hidden, 3 * hidden), config.heads);
    Array context = mergeHeads(maskedAttention(
        q, k, v, 1.0 / std::sqrt(double(q.dim(-1))), AttentionMask{},
        /*causal=*/true));
    x = add(x, conv1d(context, p + ".attn.c_proj"));
    Array inner =
        gelu(conv1d(norm(x, p + ".ln_2"), p + ".mlp.c_fc"), /*tanh=*/true);
    x = add(x, conv1d(inner, p + ".mlp.c_proj"));
  }
  return linear(norm(x, "transformer.ln_f"), wte);
}

} // namespace ref
