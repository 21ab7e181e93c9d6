#!/usr/bin/env python3
"""Writes the .safetensors inputs of tfm-bind-weights.mlir (run from Inputs/).

weights.safetensors holds:
  "linear.weight" F32 [2, 3] = 1 .. 6
  "linear.bias"   F32 [2]    = 0.5, -0.5
  "table"         F64 [3, 2] = 0.25 * (0 .. 5)
  "ids"           I64 [2]    = 2, 0
truncated.safetensors is weights.safetensors cut short inside the data, and
garbage.safetensors is text, not a safetensors file at all.
half.safetensors holds a half-precision checkpoint's dtypes:
  "h" F16  [6] = 1.5, -2, 65504, 2^-24 (the smallest subnormal), 2^-14 * 0.5, -inf
  "b" BF16 [3] = 1.5, -3, 2^-130 (a subnormal)
"""
import json
import struct


def safetensors(tensors):
    header, data = {}, b""
    for name, dtype, shape, fmt, values in tensors:
        raw = struct.pack("<%d%s" % (len(values), fmt), *values)
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


blob = safetensors([
    ("linear.weight", "F32", [2, 3], "f", [1, 2, 3, 4, 5, 6]),
    ("linear.bias", "F32", [2], "f", [0.5, -0.5]),
    ("table", "F64", [3, 2], "d", [0.25 * i for i in range(6)]),
    ("ids", "I64", [2], "q", [2, 0]),
])
open("weights.safetensors", "wb").write(blob)
open("truncated.safetensors", "wb").write(blob[:-12])
open("garbage.safetensors", "wb").write(b"this is not a safetensors file\n")
# bfloat16: the upper 16 bits of the float32 (these values are exact in both).
bf16 = [struct.unpack("<I", struct.pack("<f", v))[0] >> 16 for v in (1.5, -3.0, 2.0**-130)]
open("half.safetensors", "wb").write(safetensors([
    ("h", "F16", [6], "e", [1.5, -2.0, 65504.0, 2.0**-24, 2.0**-15, float("-inf")]),
    ("b", "BF16", [3], "H", bf16),
]))
