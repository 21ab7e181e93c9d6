"""A small K-quant quantizer for the decoder fixtures (generate.py).

The gguf package dequantizes Q4_K, Q5_K and Q6_K but quantizes none of
them. These functions write blocks in the layouts llama.cpp's ggml-common.h
defines (block_q4_K, block_q5_K, block_q6_K; the gguf package's
dequantize_blocks read them back), with a plain encoding: not llama.cpp's
error-minimizing search (quantize_row_q4_K_ref's make_qkx2_quants), just
min/max per sub-block and 6-bit (Q4_K, Q5_K) or 8-bit (Q6_K) scales of
those under one f16 scale per super-block of 256. Any valid encoding
serves the fixtures: their references are computed from the blocks as
written, dequantized by `gguf.quants.dequantize`.

  Q4_K  144 bytes: f16 d, f16 dmin, 12 bytes of eight 6-bit scales and
        eight 6-bit mins, 128 bytes of 4-bit q (sub-blocks 2c and 2c+1 of
        32 in the low and high nibbles of bytes 32c..32c+31);
        x = d * sc[j] * q - dmin * m[j]
  Q5_K  176 bytes: the same, then 32 bytes holding bit j of sub-block j's
        fifth bit in byte l, before the 128 bytes of low nibbles
  Q6_K  210 bytes: 128 bytes of low nibbles, 64 of high 2-bit pairs, 16
        signed 8-bit scales (one per 16 values), f16 d;
        x = d * sc[j] * (q - 32)
"""

import numpy as np

QK_K = 256


def _f16(x):
    return np.asarray(x, dtype=np.float64).astype(np.float16)


def _pack_scales(sc, m):
    """Eight 6-bit scales and mins per block into Q4_K's 12 bytes: bytes
    0-3 and 4-7 hold scales and mins 0-3 with the top two bits of 4-7;
    bytes 8-11 the low nibbles of scales and mins 4-7."""
    sc = sc.astype(np.uint8)
    m = m.astype(np.uint8)
    out = np.empty((sc.shape[0], 12), dtype=np.uint8)
    out[:, 0:4] = (sc[:, 0:4] & 0x3F) | ((sc[:, 4:8] >> 4) << 6)
    out[:, 4:8] = (m[:, 0:4] & 0x3F) | ((m[:, 4:8] >> 4) << 6)
    out[:, 8:12] = (sc[:, 4:8] & 0x0F) | ((m[:, 4:8] & 0x0F) << 4)
    return out


def _scaled_min(x, top):
    """Q4_K/Q5_K's terms for blocks x [n, 8, 32]: per sub-block a step
    (max - min) / top and an offset -min (min at most 0), both quantized to
    6 bits under the super-block's f16 d and dmin; q in 0..top."""
    lo = np.minimum(x.min(axis=-1), 0.0)
    hi = np.maximum(x.max(axis=-1), lo)
    step = (hi - lo) / top
    offset = -lo
    d = _f16(step.max(axis=-1) / 63)
    dmin = _f16(offset.max(axis=-1) / 63)
    dd, dm = d.astype(np.float64)[:, None], dmin.astype(np.float64)[:, None]
    sc = np.where(dd > 0, np.clip(np.rint(step / np.where(dd > 0, dd, 1)), 0, 63), 0)
    m = np.where(dm > 0, np.clip(np.rint(offset / np.where(dm > 0, dm, 1)), 0, 63), 0)
    s = (dd * sc)[..., None]
    q = np.where(s > 0, np.rint((x + (dm * m)[..., None]) / np.where(s > 0, s, 1)), 0)
    return d, dmin, sc, m, np.clip(q, 0, top).astype(np.uint8)


def _blocks(data):
    data = np.asarray(data, dtype=np.float64)
    assert data.shape[-1] % QK_K == 0, data.shape
    return data.reshape(-1, QK_K), data.shape


def _nibbles(q):
    """q [n, 8, 32] of 4 bits: sub-blocks 2c, 2c+1 in one 32-byte chunk."""
    return (q[:, 0::2, :] | (q[:, 1::2, :] << 4)).reshape(q.shape[0], 128)


def quantize_q4_k(data):
    x, shape = _blocks(data)
    d, dmin, sc, m, q = _scaled_min(x.reshape(-1, 8, 32), 15)
    out = np.concatenate([d.view(np.uint8).reshape(-1, 2),
                          dmin.view(np.uint8).reshape(-1, 2),
                          _pack_scales(sc, m), _nibbles(q)], axis=1)
    return out.reshape(*shape[:-1], shape[-1] // QK_K * 144)


def quantize_q5_k(data):
    x, shape = _blocks(data)
    d, dmin, sc, m, q = _scaled_min(x.reshape(-1, 8, 32), 31)
    high = ((q >> 4) & 1).astype(np.uint8)
    qh = np.zeros((q.shape[0], 32), dtype=np.uint8)
    for j in range(8):
        qh |= high[:, j, :] << j
    out = np.concatenate([d.view(np.uint8).reshape(-1, 2),
                          dmin.view(np.uint8).reshape(-1, 2),
                          _pack_scales(sc, m), qh, _nibbles(q & 0x0F)], axis=1)
    return out.reshape(*shape[:-1], shape[-1] // QK_K * 176)


def quantize_q6_k(data):
    """Per sub-block of 16 a step max|x| / 31 (q - 32 in -31..31), the
    steps as positive 8-bit scales of the super-block's f16 d."""
    x, shape = _blocks(data)
    xs = x.reshape(-1, 16, 16)
    step = np.abs(xs).max(axis=-1) / 31
    d = _f16(step.max(axis=-1) / 127)
    dd = d.astype(np.float64)[:, None]
    sc = np.where(dd > 0, np.clip(np.rint(step / np.where(dd > 0, dd, 1)), 0, 127), 0)
    s = (dd * sc)[..., None]
    q = np.where(s > 0, np.rint(xs / np.where(s > 0, s, 1)), 0)
    q = (np.clip(q, -32, 31) + 32).astype(np.uint8).reshape(-1, 8, 32)
    # Rows r = 4h + k of 32 values: the low nibble of rows 4h + t and
    # 4h + 2 + t in byte 64h + 32t + l, their top two bits in byte 32h + l
    # at bit 2k.
    ql = np.empty((q.shape[0], 128), dtype=np.uint8)
    qh = np.zeros((q.shape[0], 64), dtype=np.uint8)
    for h in range(2):
        for t in range(2):
            ql[:, 64 * h + 32 * t: 64 * h + 32 * t + 32] = (
                (q[:, 4 * h + t] & 0x0F) | ((q[:, 4 * h + 2 + t] & 0x0F) << 4))
        for k in range(4):
            qh[:, 32 * h: 32 * h + 32] |= ((q[:, 4 * h + k] >> 4) & 3) << (2 * k)
    out = np.concatenate([ql, qh, sc.astype(np.int8).view(np.uint8),
                          d.view(np.uint8).reshape(-1, 2)], axis=1)
    return out.reshape(*shape[:-1], shape[-1] // QK_K * 210)


QUANTIZERS = {"Q4_K": (quantize_q4_k, 15), "Q5_K": (quantize_q5_k, 31),
              "Q6_K": (quantize_q6_k, 31)}


def quantize(data, kind):
    """`data` [rows, k] (k a multiple of 256) as `kind` blocks, checked by
    dequantizing them with the gguf package: every value within a step
    and a half of its sub-block's (the rounding of the 6/8-bit scales and
    mins moves the grid by up to half a step more)."""
    import gguf
    quantizer, top = QUANTIZERS[kind]
    blocks = quantizer(data)
    back = gguf.quants.dequantize(blocks, gguf.GGMLQuantizationType[kind])
    x = np.asarray(data, dtype=np.float64)
    assert back.shape == x.shape, (back.shape, x.shape)
    sub = 16 if kind == "Q6_K" else 32
    xs = x.reshape(-1, sub)
    step = (xs.max(axis=1) - np.minimum(xs.min(axis=1), 0)) / top
    if kind == "Q6_K":
        step = np.abs(xs).max(axis=1) / top
    err = np.abs(back.reshape(-1, sub) - xs).max(axis=1)
    bad = err > 1.5 * step + 1e-6 * np.abs(xs).max()
    assert not bad.any(), (kind, float(err.max()), float(step.max()))
    return blocks
