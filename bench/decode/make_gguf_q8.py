#!/usr/bin/env python3
"""Writes a random Llama-architecture GGUF file whose matrices are Q8_0,
Q4_0, Q4_K, Q5_K or Q6_K (the embedding, tied to the output head, and every
linear weight), or a Q4_K_M-like mix, for examples/llama/llama.tfm, and the
inputs of one decode step:

    make_gguf_q8.py OUT_DIR [--layers 30 --hidden 576 --heads 9 --kv-heads 3
                             --ffn 1536 --vocab 49152 --position 128
                             --type Q8_0|Q4_0|Q4_K|Q5_K|Q6_K|Q4_K_M]

Q4_K_M mixes them as llama.cpp's quantizer does for that name: Q4_K, with
attn_v and ffn_down in Q6_K in the first and last eighth of the layers and
every third layer between, and the (tied) embedding in Q6_K. As there, a
matrix whose rows are not whole 256-element super-blocks (SmolLM2's hidden
576) falls back from Q4_K to Q5_0, from Q5_K to Q5_1, from Q6_K to Q8_0.

The defaults are SmolLM2-135M's shape. Pure Python (no numpy): values from
os.urandom, a random f16 scale per block; timing does not depend on them. OUT_DIR gets model.gguf, input_ids.npy [1, 1], past.npy [1] and
cache.npy (zeros, [layers, 1, kv_heads, capacity, head_dim], capacity
1024 unless --capacity).
"""
import argparse
import os
import struct

ALIGN = 32
F32, Q4_0, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K = 0, 2, 6, 7, 8, 12, 13, 14
# Elements and bytes per block, and the byte offsets of the block's f16
# scales (d, and m or dmin for Q5_1/Q4_K/Q5_K).
BLOCKS = {Q8_0: (32, 34, (0,)), Q4_0: (32, 18, (0,)), Q5_0: (32, 22, (0,)),
          Q5_1: (32, 24, (0, 2)), Q4_K: (256, 144, (0, 2)),
          Q5_K: (256, 176, (0, 2)), Q6_K: (256, 210, (208,))}
NAMES = {"Q8_0": Q8_0, "Q4_0": Q4_0, "Q4_K": Q4_K, "Q5_K": Q5_K,
         "Q6_K": Q6_K}
# llama.cpp's fallbacks for rows that are not whole super-blocks.
FALLBACK = {Q4_K: Q5_0, Q5_K: Q5_1, Q6_K: Q8_0}
KV_U32, KV_I32, KV_F32, KV_STRING, KV_ARRAY = 4, 5, 6, 8, 9


def fit(kind, cols):
    return FALLBACK[kind] if kind in FALLBACK and cols % 256 else kind


def blocks_of(kind, rows, cols):
    elements, size, scales = BLOCKS[kind]
    blocks = rows * cols // elements
    data = bytearray(os.urandom(blocks * size))
    # Scales of 2^-11 (1 + m), m random: each block its own (equal scales
    # would fold into one splat constant and hide their bytes), finite.
    for at in scales:
        data[at + 1::size] = b"\x10" * blocks
    return bytes(data)


def kinds_of(name, layers):
    """The type of each layer's attn_v / ffn_down, the others', and the
    embedding's."""
    if name != "Q4_K_M":
        k = NAMES[name]
        return [k] * layers, k, k
    more = [i < layers // 8 or i >= 7 * layers // 8 or
            (i - layers // 8) % 3 == 2 for i in range(layers)]
    return [Q6_K if m else Q4_K for m in more], Q4_K, Q6_K


def ones(n):
    return struct.pack(f"<{n}f", *([1.0] * n))


def gguf_string(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def write_gguf(path, metadata, tensors):
    out = bytearray(b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(metadata)))
    for key, (kind, value) in metadata.items():
        out += gguf_string(key) + struct.pack("<I", kind)
        if kind == KV_STRING:
            out += gguf_string(value)
        elif kind == KV_ARRAY:
            element, items = value
            out += struct.pack("<IQ", element, len(items))
            for item in items:
                out += (gguf_string(item) if element == KV_STRING else
                        struct.pack("<i" if element == KV_I32 else "<f", item))
        elif kind == KV_U32:
            out += struct.pack("<I", value)
        else:
            out += struct.pack("<f", value)
    offset = 0
    for name, kind, dims, data in tensors:
        out += gguf_string(name) + struct.pack("<I", len(dims))
        out += b"".join(struct.pack("<Q", d) for d in dims)
        out += struct.pack("<IQ", kind, offset)
        offset += (len(data) + ALIGN - 1) // ALIGN * ALIGN
    out += b"\0" * (-len(out) % ALIGN)
    with open(path, "wb") as f:
        f.write(out)
        for _, _, _, data in tensors:
            f.write(data)
            f.write(b"\0" * (-len(data) % ALIGN))


def write_npy(path, descr, shape, data):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join(f"{d}, " for d in shape))
    header += " " * (-(len(header) + 11) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode())
        f.write(data)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--layers", type=int, default=30)
    p.add_argument("--hidden", type=int, default=576)
    p.add_argument("--heads", type=int, default=9)
    p.add_argument("--kv-heads", type=int, default=3)
    p.add_argument("--ffn", type=int, default=1536)
    p.add_argument("--vocab", type=int, default=49152)
    p.add_argument("--position", type=int, default=128)
    p.add_argument("--capacity", type=int, default=1024,
                   help="positions of cache.npy (the model's tfm.capacity)")
    p.add_argument("--type", choices=list(NAMES) + ["Q4_K_M"],
                   default="Q8_0")
    p.add_argument("--llama-cpp", action="store_true",
                   help="also the keys llama.cpp requires: context length, "
                        "rope dims and a SentencePiece-style vocabulary of "
                        "placeholder tokens (<unk>, <s>, </s>, the 256 byte "
                        "tokens, then t3.. )")
    a = p.parse_args()
    more_bits, Q, E = kinds_of(a.type, a.layers)

    os.makedirs(a.out, exist_ok=True)
    h, d = a.hidden, a.hidden // a.heads
    kv = a.kv_heads * d
    metadata = {
        "general.architecture": (KV_STRING, "llama"),
        "llama.block_count": (KV_U32, a.layers),
        "llama.embedding_length": (KV_U32, h),
        "llama.feed_forward_length": (KV_U32, a.ffn),
        "llama.attention.head_count": (KV_U32, a.heads),
        "llama.attention.head_count_kv": (KV_U32, a.kv_heads),
        "llama.rope.freq_base": (KV_F32, 100000.0),
        "llama.attention.layer_norm_rms_epsilon": (KV_F32, 1e-5),
    }
    if a.llama_cpp:
        tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
        tokens += [f"t{i}" for i in range(len(tokens), a.vocab)]
        types = [2, 3, 3] + [6] * 256 + [1] * (a.vocab - 259)
        metadata.update({
            "llama.context_length": (KV_U32, 2048),
            "llama.rope.dimension_count": (KV_U32, d),
            "llama.vocab_size": (KV_U32, a.vocab),
            "tokenizer.ggml.model": (KV_STRING, "llama"),
            "tokenizer.ggml.tokens": (KV_ARRAY, (KV_STRING, tokens)),
            "tokenizer.ggml.scores": (KV_ARRAY, (KV_F32, [0.0] * a.vocab)),
            "tokenizer.ggml.token_type": (KV_ARRAY, (KV_I32, types)),
        })
    # GGUF dims run fastest first: a [out, in] matrix is (in, out).
    def matrix(name, kind, rows, cols):
        kind = fit(kind, cols)
        return (name, kind, (cols, rows), blocks_of(kind, rows, cols))

    tensors = [matrix("token_embd.weight", E, a.vocab, h),
               ("output_norm.weight", F32, (h,), ones(h))]
    for i in range(a.layers):
        b, M = f"blk.{i}.", more_bits[i]
        tensors += [
            (b + "attn_norm.weight", F32, (h,), ones(h)),
            matrix(b + "attn_q.weight", Q, h, h),
            matrix(b + "attn_k.weight", Q, kv, h),
            matrix(b + "attn_v.weight", M, kv, h),
            matrix(b + "attn_output.weight", Q, h, h),
            (b + "ffn_norm.weight", F32, (h,), ones(h)),
            matrix(b + "ffn_gate.weight", Q, a.ffn, h),
            matrix(b + "ffn_up.weight", Q, a.ffn, h),
            matrix(b + "ffn_down.weight", M, h, a.ffn),
        ]
    write_gguf(os.path.join(a.out, "model.gguf"), metadata, tensors)
    write_npy(os.path.join(a.out, "input_ids.npy"), "<i8", (1, 1),
              struct.pack("<q", 1))
    write_npy(os.path.join(a.out, "past.npy"), "<i8", (1,),
              struct.pack("<q", a.position))
    cache = (a.layers, 1, a.kv_heads, a.capacity, d)
    n = a.layers * a.kv_heads * a.capacity * d
    write_npy(os.path.join(a.out, "cache.npy"), "<f4", cache, bytes(4 * n))
    linear = a.layers * (2 * h * h + 2 * h * kv + 3 * h * a.ffn) + a.vocab * h
    print(f"{linear} weights in linear layers (output head included)")
    mix = {}
    for _, kind, dims, _ in tensors:
        if kind != F32:
            n = dims[0] * dims[1]
            mix[kind] = mix.get(kind, 0) + n
    names = {v: k for k, v in list(NAMES.items()) + [("Q5_0", Q5_0),
                                                      ("Q5_1", Q5_1)]}
    print("mix: " + ", ".join(f"{names[k]} {n}" for k, n in sorted(mix.items())))


if __name__ == "__main__":
    main()
