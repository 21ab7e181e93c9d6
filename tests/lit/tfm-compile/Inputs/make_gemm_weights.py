#!/usr/bin/env python3
"""Writes gemm.safetensors (run from Inputs/), the weights of
emit-gpu-dtype.tfm: "proj.weight" F32 [16, 3] = 0.1 * (1 .. 48) and
"proj.bias" F32 [16] = 0.5."""
import json
import struct

tensors = [("proj.weight", [16, 3], [0.1 * (i + 1) for i in range(48)]),
           ("proj.bias", [16], [0.5] * 16)]
header, data = {}, b""
for name, shape, values in tensors:
    raw = struct.pack("<%df" % len(values), *values)
    header[name] = {"dtype": "F32", "shape": shape,
                    "data_offsets": [len(data), len(data) + len(raw)]}
    data += raw
text = json.dumps(header, separators=(",", ":")).encode()
text += b" " * (-len(text) % 8)
open("gemm.safetensors", "wb").write(struct.pack("<Q", len(text)) + text + data)
