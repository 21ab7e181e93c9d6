#!/usr/bin/env python3
"""Writes the .safetensors inputs of tfm-bind-weights.mlir (run from Inputs/).

weights.safetensors holds:
  "linear.weight" F32 [2, 3] = 1 .. 6
  "linear.bias"   F32 [2]    = 0.5, -0.5
  "table"         F64 [3, 2] = 0.25 * (0 .. 5)
  "ids"           I64 [2]    = 2, 0
truncated.safetensors is weights.safetensors cut short inside the data, and
garbage.safetensors is text, not a safetensors file at all.
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
