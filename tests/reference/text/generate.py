#!/usr/bin/env python3
"""Expected results of `tfm-run --generate N --text ...` (tests/lit/tfm-run/
generate-text.test): prompt ids, greedily generated ids and the text.

    python3 tests/reference/text/generate.py             # make a venv, install, run
    python3 tests/reference/text/generate.py --python P  # use interpreter P instead
    python3 tests/reference/text/generate.py --check     # fail unless a fresh run
                                                         # is byte-identical

Without --python, the script creates tests/reference/text/.venv (gitignored)
and installs tokenizers, transformers, gguf and numpy from PyPI (no torch).

For each case of expected.json:
  gpt2   examples/generate-c/gpt2_cached.tfm over tests/reference/hf/gpt2 (vocab
         503) with the byte-level BPE of tests/reference/tokenizers/gpt2 (900
         ids; the prompt uses ids < 503 only). Prompt ids and text: the
         `tokenizers` package.
  llama  examples/llama/llama.tfm over tests/reference/gguf/llama.gguf with
         the file's own vocabulary (tokenizer.ggml.*, 40 ids). Prompt ids
         and text: transformers' GGUF tokenizer conversion (LlamaTokenizer
         from_pretrained(gguf_file=...)).
The generated ids come from a float64 numpy forward pass of each checkpoint
(torch is not installable here): the GPT-2 one is first checked against the
logits and generate() tokens that transformers saved in tests/reference/hf/
gpt2 (rtol 1e-4); the Llama one follows tests/e2e/ReferenceDecoder.cpp
(llama.cpp's pairwise RoPE) on the gguf package's dequantized weights. Each
greedy choice must beat the runner-up by more than 1e-3, so that float32
rounding cannot flip it. `text` is the decode of prompt + generated ids with
skip_special_tokens, which is what tfm-run prints (streamed) after "text: ".

embeddings.txt: the sentence embeddings examples/embed-text-c's ctest
compares with (EMBED_TEXTS through the bert_uncased tokenizer fixture and a
float64 numpy BertModel over tests/reference/hf/bert, first checked against
the last_hidden_state and sentence_embedding transformers saved there).
"""

import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile
import types

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
VENV = os.path.join(HERE, ".venv")
PACKAGES = ["tokenizers==0.23.3", "transformers==5.24.0", "gguf==0.19.0",
            "numpy", "sentencepiece", "protobuf"]
TOKENS = 8
MARGIN = 1e-3


def in_venv(argv):
    python = os.path.join(VENV, "bin", "python")
    if not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
        subprocess.run([python, "-m", "pip", "install", "-q"] + PACKAGES,
                       check=True)
    return subprocess.run([python, __file__, "--python", python] + argv).returncode


def read_safetensors(path):
    import numpy as np
    with open(path, "rb") as f:
        size = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(size))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        assert info["dtype"] == "F32", name
        begin, end = info["data_offsets"]
        out[name] = np.frombuffer(data[begin:end], "<f4").reshape(
            info["shape"]).astype(np.float64)
    return out


def greedy(forward, prompt, tokens):
    """Greedy ids after `prompt`, recomputing the whole sequence each step."""
    import numpy as np
    ids = list(prompt)
    for _ in range(tokens):
        row = forward(ids)[-1]
        order = np.argsort(-row, kind="stable")
        assert row[order[0]] - row[order[1]] > MARGIN, (ids, row[order[:2]])
        ids.append(int(order[0]))
    return ids[len(prompt):]


def gpt2_forward(w, config):
    import numpy as np
    eps, heads = config["layer_norm_epsilon"], config["n_head"]

    def norm(x, p):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + eps) * w[p + ".weight"] + w[p + ".bias"]

    def conv(x, p):  # HF Conv1D: weight [in, out]
        return x @ w[p + ".weight"] + w[p + ".bias"]

    def gelu(x):
        return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))

    def forward(ids):
        s = len(ids)
        x = w["transformer.wte.weight"][ids] + w["transformer.wpe.weight"][:s]
        for i in range(config["n_layer"]):
            p = f"transformer.h.{i}."
            q, k, v = np.split(conv(norm(x, p + "ln_1"), p + "attn.c_attn"), 3, -1)
            d = q.shape[-1] // heads
            q, k, v = (t.reshape(s, heads, d).transpose(1, 0, 2) for t in (q, k, v))
            scores = q @ k.transpose(0, 2, 1) / np.sqrt(d)
            scores = np.where(np.tril(np.ones((s, s), bool)), scores, -np.inf)
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            o = (scores / scores.sum(-1, keepdims=True)) @ v
            x = x + conv(o.transpose(1, 0, 2).reshape(s, -1), p + "attn.c_proj")
            h = gelu(conv(norm(x, p + "ln_2"), p + "mlp.c_fc"))
            x = x + conv(h, p + "mlp.c_proj")
        return norm(x, "transformer.ln_f") @ w["transformer.wte.weight"].T
    return forward


def case_gpt2():
    import numpy as np
    from tokenizers import Tokenizer
    hf = os.path.join(ROOT, "tests/reference/hf/gpt2")
    with open(os.path.join(hf, "config.json")) as f:
        config = json.load(f)
    forward = gpt2_forward(read_safetensors(os.path.join(hf, "model.safetensors")),
                           config)
    # Anchor the numpy model to what transformers computed.
    ids = np.load(os.path.join(hf, "input_ids.npy"))
    want = np.load(os.path.join(hf, "logits.npy"))
    for b in range(ids.shape[0]):
        assert np.allclose(forward(ids[b].tolist()), want[b], rtol=1e-4, atol=1e-4)
    tokens = np.load(os.path.join(hf, "generate_tokens.npy"))[0].tolist()
    assert greedy(forward, tokens[:5], 8) == tokens[5:]

    tok = Tokenizer.from_file(
        os.path.join(ROOT, "tests/reference/tokenizers/gpt2/tokenizer.json"))
    prompt = "the cat sat on the mat"
    prompt_ids = tok.encode(prompt).ids
    assert max(prompt_ids) < config["vocab_size"]
    generated = greedy(forward, prompt_ids, TOKENS)
    return {"prompt": prompt, "prompt_ids": prompt_ids, "generated_ids": generated,
            "text": tok.decode(prompt_ids + generated, skip_special_tokens=True)}


def llama_tokenizer(path):
    """transformers' tokenizer for a GGUF file. Its GGUF metadata reader
    imports torch without using it for metadata: a stand-in module lets it
    load."""
    import transformers  # noqa: F401 (imported before the stand-in)
    from transformers import LlamaTokenizer
    sys.modules["torch"] = types.ModuleType("torch")
    sys.modules["torch"].__getattr__ = lambda name: type(name, (), {})
    try:
        import transformers.integrations.gguf.reader  # noqa: F401
    finally:
        del sys.modules["torch"]
    return LlamaTokenizer.from_pretrained(os.path.dirname(path),
                                          gguf_file=os.path.basename(path))


def llama_forward(path):
    import gguf
    import numpy as np
    reader = gguf.GGUFReader(path)
    meta = {f.name: f.contents() for f in reader.fields.values()}
    w = {}
    for t in reader.tensors:
        values = gguf.quants.dequantize(t.data, t.tensor_type)
        w[t.name] = np.asarray(values, np.float64).reshape(
            tuple(reversed([int(d) for d in t.shape])))
    layers = meta["llama.block_count"]
    heads = meta["llama.attention.head_count"]
    kv_heads = meta["llama.attention.head_count_kv"]
    eps = meta["llama.attention.layer_norm_rms_epsilon"]
    base = meta["llama.rope.freq_base"]

    def norm(x, name):
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w[name]

    def rope(x, d):  # [h, s, d], llama.cpp's mode 0: adjacent pairs
        s = x.shape[1]
        f = base ** (-np.arange(0, d, 2) / d)
        angle = np.arange(s)[:, None] * f[None, :]
        c, sn = np.cos(angle), np.sin(angle)
        a, z = x[..., 0::2], x[..., 1::2]
        y = np.empty_like(x)
        y[..., 0::2] = a * c - z * sn
        y[..., 1::2] = z * c + a * sn
        return y

    def forward(ids):
        s = len(ids)
        x = w["token_embd.weight"][ids]
        for i in range(layers):
            p = f"blk.{i}."
            h = norm(x, p + "attn_norm.weight")
            q = h @ w[p + "attn_q.weight"].T
            k = h @ w[p + "attn_k.weight"].T
            v = h @ w[p + "attn_v.weight"].T
            d = q.shape[-1] // heads
            q = rope(q.reshape(s, heads, d).transpose(1, 0, 2), d)
            k = rope(k.reshape(s, kv_heads, d).transpose(1, 0, 2), d)
            v = v.reshape(s, kv_heads, d).transpose(1, 0, 2)
            group = heads // kv_heads
            k, v = np.repeat(k, group, 0), np.repeat(v, group, 0)
            scores = q @ k.transpose(0, 2, 1) / np.sqrt(d)
            scores = np.where(np.tril(np.ones((s, s), bool)), scores, -np.inf)
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            o = (scores / scores.sum(-1, keepdims=True)) @ v
            x = x + o.transpose(1, 0, 2).reshape(s, -1) @ w[p + "attn_output.weight"].T
            h = norm(x, p + "ffn_norm.weight")
            gate = h @ w[p + "ffn_gate.weight"].T
            up = h @ w[p + "ffn_up.weight"].T
            x = x + (gate / (1 + np.exp(-gate)) * up) @ w[p + "ffn_down.weight"].T
        return norm(x, "output_norm.weight") @ w["output.weight"].T
    return forward


def case_llama():
    path = os.path.join(ROOT, "tests/reference/gguf/llama.gguf")
    tok = llama_tokenizer(path)
    prompt = "hello world"
    prompt_ids = tok(prompt)["input_ids"]
    generated = greedy(llama_forward(path), prompt_ids, TOKENS)
    return {"prompt": prompt, "prompt_ids": prompt_ids, "generated_ids": generated,
            "text": tok.decode(prompt_ids + generated, skip_special_tokens=True)}


def bert_forward(w, config):
    import math
    import numpy as np
    eps, heads = config["layer_norm_eps"], config["num_attention_heads"]
    erf = np.vectorize(math.erf)

    def norm(x, p):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + eps) * w[p + ".weight"] + w[p + ".bias"]

    def dense(x, p):  # nn.Linear: weight [out, in]
        return x @ w[p + ".weight"].T + w[p + ".bias"]

    def forward(ids, types, mask):
        s = len(ids)
        x = (w["embeddings.word_embeddings.weight"][ids]
             + w["embeddings.token_type_embeddings.weight"][types]
             + w["embeddings.position_embeddings.weight"][:s])
        x = norm(x, "embeddings.LayerNorm")
        bias = np.where(np.asarray(mask) == 0, -np.inf, 0.0)
        for i in range(config["num_hidden_layers"]):
            p = f"encoder.layer.{i}."
            q, k, v = (dense(x, p + "attention.self." + n).reshape(s, heads, -1)
                       .transpose(1, 0, 2) for n in ("query", "key", "value"))
            scores = q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[-1]) + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            a = ((scores / scores.sum(-1, keepdims=True)) @ v).transpose(1, 0, 2)
            x = norm(x + dense(a.reshape(s, -1), p + "attention.output.dense"),
                     p + "attention.output.LayerNorm")
            h = dense(x, p + "intermediate.dense")
            h = 0.5 * h * (1 + erf(h / math.sqrt(2)))
            x = norm(x + dense(h, p + "output.dense"), p + "output.LayerNorm")
        valid = np.asarray(mask, np.float64)[:, None]
        pooled = (x * valid).sum(0) / max(valid.sum(), 1e-9)
        return x, pooled / max(np.linalg.norm(pooled), 1e-12)
    return forward


# The sentences examples/embed-text-c's ctest embeds (one batch, padded).
EMBED_TEXTS = ["Hello, world!", "The quick brown fox jumps over the lazy dog.",
               "Caf\u00e9 au lait, s'il vous pla\u00eet."]


def embeddings():
    """Sentence embeddings (mean of the last hidden state over the real
    tokens, L2-normalised) of EMBED_TEXTS with tests/reference/hf/bert and
    the bert_uncased tokenizer fixture, one text line of floats each."""
    import numpy as np
    from tokenizers import Tokenizer
    hf = os.path.join(ROOT, "tests/reference/hf/bert")
    with open(os.path.join(hf, "config.json")) as f:
        config = json.load(f)
    forward = bert_forward(read_safetensors(os.path.join(hf, "model.safetensors")),
                           config)
    # Anchor the numpy model to what transformers computed.
    ids, types, mask = (np.load(os.path.join(hf, n + ".npy")) for n in
                        ("input_ids", "token_type_ids", "attention_mask"))
    hidden = np.load(os.path.join(hf, "last_hidden_state.npy"))
    sentence = np.load(os.path.join(hf, "sentence_embedding.npy"))
    for b in range(ids.shape[0]):
        x, e = forward(ids[b], types[b], mask[b])
        assert np.allclose(x, hidden[b], rtol=1e-4, atol=1e-4)
        assert np.allclose(e, sentence[b], rtol=1e-4, atol=1e-5)
    tok = Tokenizer.from_file(
        os.path.join(ROOT, "tests/reference/tokenizers/bert_uncased/tokenizer.json"))
    tok.enable_padding(pad_id=0, pad_token="[PAD]")
    lines = []
    for enc in tok.encode_batch(EMBED_TEXTS):
        _, e = forward(enc.ids, enc.type_ids, enc.attention_mask)
        lines.append(" ".join(f"{v:.9g}" for v in e))
    return "".join(line + "\n" for line in lines)


def write(out):
    cases = {"gpt2": case_gpt2(), "llama": case_llama()}
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(cases, f, indent=1, ensure_ascii=False)
        f.write("\n")
    with open(os.path.join(out, "embeddings.txt"), "w") as f:
        f.write(embeddings())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--python")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    if not args.python:
        return in_venv(sys.argv[1:])
    if not args.check:
        write(HERE)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        write(tmp)
        for name in ("expected.json", "embeddings.txt"):
            with open(os.path.join(tmp, name), "rb") as a, \
                    open(os.path.join(HERE, name), "rb") as b:
                if a.read() != b.read():
                    print(name, "differs from a fresh run")
                    return 1
    print("expected.json and embeddings.txt are up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
