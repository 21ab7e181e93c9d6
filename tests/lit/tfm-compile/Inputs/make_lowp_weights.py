#!/usr/bin/env python3
"""Writes lowp.safetensors (run from Inputs/), the weights of lowp.tfm:
"enc.q.weight" F32 [4, 3] = 0.1 * (1 .. 12), "enc.q.bias" F32 [4] = 0.5,
"pooler.weight" F32 [2, 4] = -0.25 * (1 .. 8) and "proj" F32 [4, 2]
(an `x @ W` operand, [in, out]) = 1 .. 8."""
import json
import struct

tensors = [("enc.q.weight", [4, 3], [0.1 * (i + 1) for i in range(12)]),
           ("enc.q.bias", [4], [0.5] * 4),
           ("pooler.weight", [2, 4], [-0.25 * (i + 1) for i in range(8)]),
           ("proj", [4, 2], [float(i + 1) for i in range(8)])]
header, data = {}, b""
for name, shape, values in tensors:
    raw = struct.pack("<%df" % len(values), *values)
    header[name] = {"dtype": "F32", "shape": shape,
                    "data_offsets": [len(data), len(data) + len(raw)]}
    data += raw
text = json.dumps(header, separators=(",", ":")).encode()
text += b" " * (-len(text) % 8)
open("lowp.safetensors", "wb").write(struct.pack("<Q", len(text)) + text + data)
