#!/usr/bin/env python3
"""Generate the GGUF reader's fixtures (tests/reference/gguf/).

    python3 tests/reference/gguf/generate.py             # make a venv, install, run
    python3 tests/reference/gguf/generate.py --python P  # use interpreter P instead
    python3 tests/reference/gguf/generate.py --check     # fail unless a fresh run
                                                         # is byte-identical

Without --python, the script creates tests/reference/gguf/.venv (gitignored),
installs the `gguf` package (llama.cpp's own writer and reader) and numpy
from PyPI into it, and runs itself there.

Writes:
  types.gguf       one tensor per ggml type the reader dequantizes (F32, F16,
                   BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K), each
                   [3, 512]: quantized by the gguf package from seeded values,
                   or (K-quants, which it cannot quantize) seeded random blocks,
                   and metadata of every value type (integers of each width,
                   floats, bool, string, arrays of numbers and of strings)
  types.<TYPE>.npy the gguf package's own dequantization of each tensor
                   (float32 [3, 512]): the reference, bit for bit
  metadata.json    the metadata the test expects, as JSON
  llama.gguf       a two-layer Llama decoder (hidden 64, 4 query heads over 2
                   K/V heads, SwiGLU 96, vocabulary 40) under llama.cpp's
                   names and metadata, its weights in a different type each
                   (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, F16, BF16, F32): what the
                   e2e test compiles with --weights, with a tokenizer of its
                   own 40 ids (tokenizer.ggml.model llama: <unk> <s> </s>,
                   14 characters and 23 merged pieces, no byte tokens) that
                   tfm-run --generate --text reads (tests/reference/text/)
  llama-rope-freqs.gguf  llama.gguf's decoder in F32 with the
                   rope_freqs.weight a Llama 3.1 file carries (llama3 scaling:
                   factor 8 over an original context of 16 positions)
  llama-kquant.gguf the same decoder at hidden 256 (4 query heads of 64 over
                   2 K/V heads, SwiGLU 512, vocabulary 40, no tokenizer) with
                   a Q4_K_M-like mix of K-quants: attn_q, attn_k, attn_output,
                   ffn_gate, ffn_up in Q4_K (layer 1's attn_output in Q5_K),
                   attn_v, ffn_down, output and token_embd in Q6_K; seeded
                   random blocks (the package quantizes no K-quant) whose f16
                   scales give each weight the spread asked for, mean zero
"""

import argparse
import filecmp
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
VENV = os.path.join(HERE, ".venv")
PACKAGES = ["gguf==0.19.0", "numpy"]
TYPES = ["F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q4_K",
         "Q5_K", "Q6_K"]
SHAPE = (3, 512)


def in_venv(argv):
    python = os.path.join(VENV, "bin", "python")
    if not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
        subprocess.run([python, "-m", "pip", "install", "-q"] + PACKAGES,
                       check=True)
    return subprocess.run([python, __file__, "--python", python] + argv).returncode


def write(out):
    import gguf
    import numpy as np

    rng = np.random.default_rng(2026)
    writer = gguf.GGUFWriter(os.path.join(out, "types.gguf"), arch="llama")
    metadata = {
        "test.u8": ("uint8", 200), "test.i8": ("int8", -100),
        "test.u16": ("uint16", 60000), "test.i16": ("int16", -30000),
        "test.u32": ("uint32", 4000000000), "test.i32": ("int32", -2000000000),
        "test.u64": ("uint64", 2 ** 40 + 7), "test.i64": ("int64", -(2 ** 40)),
        "test.f32": ("float32", 0.5), "test.f64": ("float64", 1e-300),
        "test.bool": ("bool", True), "test.string": ("string", "héllo\n"),
    }
    for key, (kind, value) in metadata.items():
        getattr(writer, "add_" + kind)(key, value)
    writer.add_array("test.numbers", [1, 2, 3])
    writer.add_array("test.strings", ["a", "", "ccc"])
    for name in TYPES:
        qtype = gguf.GGMLQuantizationType[name]
        values = (rng.standard_normal(SHAPE) * (0.5 + rng.random(SHAPE))) \
            .astype(np.float32)
        # Some exact zeros, large values and a subnormal half scale.
        values[0, :32] = 0
        values[1, 32:64] *= 100
        values[2, 64:96] *= 1e-6
        if name == "F32":
            data = values
        elif name == "F16":
            data = values.astype(np.float16)
        elif name.endswith("_K"):
            # The package quantizes no K-quant: random blocks (any bits are
            # a valid block) with finite f16 scales where the format keeps
            # them.
            elements, size = gguf.GGML_QUANT_SIZES[qtype]
            data = rng.integers(0, 256, (SHAPE[0], SHAPE[1] // elements * size),
                                dtype=np.uint8)
            blocks = data.reshape(-1, size)
            halves = (rng.standard_normal((blocks.shape[0], 2)) * 0.01) \
                .astype(np.float16).view(np.uint8)
            if name == "Q6_K":
                blocks[:, size - 2:] = halves[:, :2]
            else:
                blocks[:, :4] = halves
        else:
            data = gguf.quants.quantize(values, qtype)
        writer.add_tensor("t." + name, data, raw_dtype=qtype)
        np.save(os.path.join(out, f"types.{name}.npy"),
                gguf.quants.dequantize(data, qtype).astype(np.float32)
                .reshape(SHAPE))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    expected = {k: v[1] for k, v in metadata.items()}
    expected["test.numbers"] = [1, 2, 3]
    expected["test.strings"] = ["a", "", "ccc"]
    expected["general.architecture"] = "llama"
    with open(os.path.join(out, "metadata.json"), "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True, ensure_ascii=False)
        f.write("\n")


LLAMA = dict(layers=2, hidden=64, heads=4, kv_heads=2, ffn=96, vocab=40)
# The vocabulary of llama.gguf: SentencePiece pieces ("\u2581" is the space),
# scored -id (earlier pieces merge first). Every piece of two or more
# characters is two earlier pieces joined, so the BPE reaches it.
LLAMA_SPECIALS = ["<unk>", "<s>", "</s>"]
LLAMA_PIECES = (list("\u2581acdehlorstwni") + [
    "\u2581t", "he", "\u2581the", "ll", "llo", "\u2581he", "\u2581hello",
    "\u2581w", "or", "\u2581wor", "ld", "\u2581world", "at", "\u2581c",
    "\u2581cat", "\u2581s", "\u2581sat", "\u2581o", "\u2581on", "in",
    "\u2581a", "\u2581an", "\u2581and"])


def add_llama_tokenizer(writer):
    import gguf
    tokens = LLAMA_SPECIALS + LLAMA_PIECES
    assert len(tokens) == LLAMA["vocab"] and len(set(tokens)) == len(tokens)
    for i, t in enumerate(tokens):
        if i >= len(LLAMA_SPECIALS) and len(t) > 1:
            assert any(t[:k] in tokens[:i] and t[k:] in tokens[:i]
                       for k in range(1, len(t))), t
    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_scores([-float(i) for i in range(len(tokens))])
    writer.add_token_types(
        [gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL,
         gguf.TokenType.CONTROL] +
        [gguf.TokenType.NORMAL] * len(LLAMA_PIECES))
    writer.add_unk_token_id(0)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(False)
    writer.add_add_space_prefix(True)


LLAMA_TYPES = {
    "token_embd.weight": "Q8_0", "output_norm.weight": "F32",
    "output.weight": "F16", "attn_norm.weight": "F32",
    "attn_q.weight": "Q8_0", "attn_k.weight": "Q4_0", "attn_v.weight": "Q4_1",
    "attn_output.weight": "Q5_0", "ffn_norm.weight": "F32",
    "ffn_gate.weight": "Q5_1", "ffn_up.weight": "BF16",
    "ffn_down.weight": "Q4_0",
}


def llama3_rope_freqs(head_dim, theta, factor, low, high, original):
    """The rope_freqs.weight llama.cpp's converter writes for a Llama 3.1
    checkpoint (LlamaModel.generate_extra_tensors): per frequency, 1 for the
    short wavelengths, `factor` for the long ones, smoothed between."""
    import numpy as np
    freqs = theta ** -(np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)
    low_wavelen, high_wavelen = original / low, original / high
    factors = []
    for freq in freqs:
        wavelen = 2 * np.pi / freq
        if wavelen < high_wavelen:
            factors.append(1.0)
        elif wavelen > low_wavelen:
            factors.append(factor)
        else:
            smooth = (original / wavelen - low) / (high - low)
            factors.append(1 / ((1 - smooth) / factor + smooth))
    return np.array(factors, dtype=np.float32)


def write_llama(out, file="llama.gguf", all_f32=False):
    """llama.gguf; with all_f32, llama-rope-freqs.gguf: the same decoder in
    F32 with a Llama 3.1 file's rope_freqs.weight (factor 8 over an original
    context of 16 positions, so that the test's positions feel it)."""
    import gguf
    import numpy as np

    rng = np.random.default_rng(2027)
    c = LLAMA
    head_dim = c["hidden"] // c["heads"]
    writer = gguf.GGUFWriter(os.path.join(out, file), arch="llama")
    writer.add_name("tfm-test-llama" + ("-rope-freqs" if all_f32 else ""))
    writer.add_context_length(24)
    writer.add_embedding_length(c["hidden"])
    writer.add_block_count(c["layers"])
    writer.add_feed_forward_length(c["ffn"])
    writer.add_head_count(c["heads"])
    writer.add_head_count_kv(c["kv_heads"])
    writer.add_rope_dimension_count(head_dim)
    writer.add_rope_freq_base(10000.0)
    writer.add_layer_norm_rms_eps(1e-5)
    add_llama_tokenizer(writer)

    def add(name, shape, scale, offset=0.0):
        values = (offset + scale * rng.uniform(-1, 1, shape)).astype(np.float32)
        kind = "F32" if all_f32 else LLAMA_TYPES[
            name.split(".", 2)[-1] if name.startswith("blk.") else name]
        if kind == "F32":
            data = values
        elif kind == "F16":
            data = values.astype(np.float16)
        else:
            data = gguf.quants.quantize(values, gguf.GGMLQuantizationType[kind])
        writer.add_tensor(name, data, raw_dtype=gguf.GGMLQuantizationType[kind])

    h, f = c["hidden"], c["ffn"]
    q, kv = c["heads"] * head_dim, c["kv_heads"] * head_dim
    add("token_embd.weight", (c["vocab"], h), 1.0)
    for i in range(c["layers"]):
        p = f"blk.{i}."
        add(p + "attn_norm.weight", (h,), 0.5, 1.0)
        add(p + "attn_q.weight", (q, h), 0.25)
        add(p + "attn_k.weight", (kv, h), 0.25)
        add(p + "attn_v.weight", (kv, h), 0.25)
        add(p + "attn_output.weight", (h, q), 0.2)
        add(p + "ffn_norm.weight", (h,), 0.5, 1.0)
        add(p + "ffn_gate.weight", (f, h), 0.25)
        add(p + "ffn_up.weight", (f, h), 0.25)
        add(p + "ffn_down.weight", (h, f), 0.2)
    add("output_norm.weight", (h,), 0.5, 1.0)
    add("output.weight", (c["vocab"], h), 0.3)
    if all_f32:
        writer.add_tensor("rope_freqs.weight", llama3_rope_freqs(
            head_dim, 10000.0, factor=8.0, low=1.0, high=4.0, original=16))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


LLAMA_KQUANT = dict(layers=2, hidden=256, heads=4, kv_heads=2, ffn=512,
                    vocab=40)


def kquant_blocks(rng, kind, shape, scale):
    """Random `kind` blocks for a [rows, cols] weight: any bits are a valid
    block; the f16 super-block scales are set so that the values spread
    about `scale` around zero (Q4_K/Q5_K: d sc q - dmin m with sc, m, q
    uniform; Q6_K: d sc (q - 32))."""
    import gguf
    import numpy as np
    qtype = gguf.GGMLQuantizationType[kind]
    elements, size = gguf.GGML_QUANT_SIZES[qtype]
    rows, cols = shape
    data = rng.integers(0, 256, (rows, cols // elements * size), dtype=np.uint8)
    blocks = data.reshape(-1, size)
    jitter = 0.75 + 0.5 * rng.random((blocks.shape[0], 1))
    if kind == "Q6_K":
        d = scale * jitter / 2400
        blocks[:, 208:210] = d.astype(np.float16).view(np.uint8)
    else:
        top = 15 if kind == "Q4_K" else 31
        d = 2 * scale * jitter / (63 * top)
        dmin = scale * jitter / 63
        blocks[:, 0:2] = d.astype(np.float16).view(np.uint8)
        blocks[:, 2:4] = dmin.astype(np.float16).view(np.uint8)
    return data, qtype


def write_llama_kquant(out):
    import gguf
    import numpy as np

    rng = np.random.default_rng(2028)
    c = LLAMA_KQUANT
    head_dim = c["hidden"] // c["heads"]
    writer = gguf.GGUFWriter(os.path.join(out, "llama-kquant.gguf"),
                             arch="llama")
    writer.add_name("tfm-test-llama-kquant")
    writer.add_context_length(24)
    writer.add_embedding_length(c["hidden"])
    writer.add_block_count(c["layers"])
    writer.add_feed_forward_length(c["ffn"])
    writer.add_head_count(c["heads"])
    writer.add_head_count_kv(c["kv_heads"])
    writer.add_rope_dimension_count(head_dim)
    writer.add_rope_freq_base(10000.0)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_vocab_size(c["vocab"])

    def add(name, kind, shape, scale, offset=0.0):
        if kind == "F32":
            data = (offset + scale * rng.uniform(-1, 1, shape)) \
                .astype(np.float32)
            writer.add_tensor(name, data)
            return
        data, qtype = kquant_blocks(rng, kind, shape, scale)
        writer.add_tensor(name, data, raw_dtype=qtype)

    h, f, v = c["hidden"], c["ffn"], c["vocab"]
    q, kv = c["heads"] * head_dim, c["kv_heads"] * head_dim
    add("token_embd.weight", "Q6_K", (v, h), 1.0)
    for i in range(c["layers"]):
        p = f"blk.{i}."
        add(p + "attn_norm.weight", "F32", (h,), 0.5, 1.0)
        add(p + "attn_q.weight", "Q4_K", (q, h), 0.12)
        add(p + "attn_k.weight", "Q4_K", (kv, h), 0.12)
        add(p + "attn_v.weight", "Q6_K", (kv, h), 0.12)
        add(p + "attn_output.weight", "Q5_K" if i == 1 else "Q4_K", (h, q),
            0.1)
        add(p + "ffn_norm.weight", "F32", (h,), 0.5, 1.0)
        add(p + "ffn_gate.weight", "Q4_K", (f, h), 0.12)
        add(p + "ffn_up.weight", "Q4_K", (f, h), 0.12)
        add(p + "ffn_down.weight", "Q6_K", (h, f), 0.08)
    add("output_norm.weight", "F32", (h,), 0.5, 1.0)
    add("output.weight", "Q6_K", (v, h), 0.15)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--python")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    if not args.python:
        return in_venv(sys.argv[1:])
    if not args.check:
        write(HERE)
        write_llama(HERE)
        write_llama(HERE, "llama-rope-freqs.gguf", all_f32=True)
        write_llama_kquant(HERE)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        write(tmp)
        write_llama(tmp)
        write_llama(tmp, "llama-rope-freqs.gguf", all_f32=True)
        write_llama_kquant(tmp)
        differ = [f for f in sorted(os.listdir(tmp))
                  if not filecmp.cmp(os.path.join(tmp, f),
                                     os.path.join(HERE, f), shallow=False)]
        if differ:
            print("differ from a fresh run:", ", ".join(differ))
            return 1
    print("fixtures are up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
