#!/usr/bin/env python3
"""Writes a random GPT-2-style decoder with key/value caches for bench/decode:
decoder.tfm, weights.safetensors and the decode-step inputs at each position.

    make_model.py OUT_DIR --layers 4 --hidden 512 --heads 8 --capacity 2048
                  --positions 16,128,512,1024,2047

Only numpy: the weights are random (timing does not depend on them) and the
caches zeros (the attention reads them all the same).
"""
import argparse
import json
import os
import struct

import numpy as np


def model_source(layers, hidden, heads, capacity, vocab, mlp):
    d = hidden // heads
    lines = [
        "model decoder",
        "input ids: i64[batch, seq]",
        "input past: i64[batch]",
        f"cache k_cache: f32[{layers}, batch, {heads}, {capacity}, {d}]",
        f"cache v_cache: f32[{layers}, batch, {heads}, {capacity}, {d}]",
        "pos = reshape(past, [batch, 1]) + arange(seq)",
        'x0 = embedding(ids, weight = "wte") + embedding(pos, weight = "wpe")',
    ]
    for i in range(layers):
        p = f'"h.{i}.'
        heads_of = lambda t: f"permute(reshape({t}, [batch, seq, {heads}, {d}]), [0, 2, 1, 3])"
        lines += [
            f'a{i} = layer_norm(x{i}, weight = {p}ln_1.weight", bias = {p}ln_1.bias")',
            f'q{i}, k{i}, v{i} = split(linear(a{i}, weight = {p}c_attn.weight", bias = {p}c_attn.bias"), {hidden})',
            f"kc{i} = cache_append(k_cache[{i}], {heads_of(f'k{i}')}, past)",
            f"vc{i} = cache_append(v_cache[{i}], {heads_of(f'v{i}')}, past)",
            f"o{i} = sdpa({heads_of(f'q{i}')}, kc{i}, vc{i}, is_causal = true, query_offset = past)",
            f"h{i} = x{i} + linear(reshape(permute(o{i}, [0, 2, 1, 3]), [batch, seq, {hidden}]), "
            f'weight = {p}c_proj.weight", bias = {p}c_proj.bias")',
            f'm{i} = gelu(linear(layer_norm(h{i}, weight = {p}ln_2.weight", bias = {p}ln_2.bias"), '
            f'weight = {p}fc.weight", bias = {p}fc.bias"), approximate = "tanh")',
            f'x{i + 1} = h{i} + linear(m{i}, weight = {p}proj.weight", bias = {p}proj.bias")',
        ]
    lines += [
        f'logits = linear(layer_norm(x{layers}, weight = "ln_f.weight", bias = "ln_f.bias"), '
        'weight = "wte")',
        "output logits",
    ]
    return "\n".join(lines) + "\n"


def weights(layers, hidden, capacity, vocab, mlp, rng):
    w = {"wte": (vocab, hidden), "wpe": (capacity, hidden),
         "ln_f.weight": (hidden,), "ln_f.bias": (hidden,)}
    for i in range(layers):
        p = f"h.{i}."
        w.update({p + "ln_1.weight": (hidden,), p + "ln_1.bias": (hidden,),
                  p + "ln_2.weight": (hidden,), p + "ln_2.bias": (hidden,),
                  # nn.Linear layout [out, in]: linear() takes the packed GEMM.
                  p + "c_attn.weight": (3 * hidden, hidden), p + "c_attn.bias": (3 * hidden,),
                  p + "c_proj.weight": (hidden, hidden), p + "c_proj.bias": (hidden,),
                  p + "fc.weight": (mlp, hidden), p + "fc.bias": (mlp,),
                  p + "proj.weight": (hidden, mlp), p + "proj.bias": (hidden,)})
    return {k: (rng.standard_normal(s) * 0.05).astype(np.float32) for k, s in w.items()}


def write_safetensors(path, tensors):
    header, offset, blobs = {}, 0, []
    for name, a in tensors.items():
        b = a.tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(b)]}
        offset += len(b)
        blobs.append(b)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--capacity", type=int, default=2048)
    ap.add_argument("--vocab", type=int, default=1000)
    ap.add_argument("--positions", default="16,128,512,1024,2047")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    rng = np.random.default_rng(0)
    with open(os.path.join(a.out, "decoder.tfm"), "w") as f:
        f.write(model_source(a.layers, a.hidden, a.heads, a.capacity, a.vocab, 4 * a.hidden))
    write_safetensors(os.path.join(a.out, "weights.safetensors"),
                      weights(a.layers, a.hidden, a.capacity, a.vocab, 4 * a.hidden, rng))
    d = a.hidden // a.heads
    cache = np.zeros((a.layers, 1, a.heads, a.capacity, d), np.float32)
    np.save(os.path.join(a.out, "cache.npy"), cache)
    np.save(os.path.join(a.out, "ids.npy"), np.array([[7]], np.int64))
    for p in a.positions.split(","):
        np.save(os.path.join(a.out, f"past_{p}.npy"), np.array([int(p)], np.int64))


if __name__ == "__main__":
    main()
