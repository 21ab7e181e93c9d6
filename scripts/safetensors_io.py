"""Writes and reads .safetensors files with json + struct + numpy only.

Shared by the scripts that generate the committed test data
(examples/seeds/generate.py, tests/reference/generate.py), so that CI and the
generators never need the `safetensors` package. Tensors are stored as F32 in
sorted-name order with contiguous offsets and a space-padded header, so a
rerun writes byte-identical files.
"""

import json
import struct

import numpy as np


def to_f32(t):
    """A C-contiguous little-endian float32 array of a torch tensor or array."""
    if hasattr(t, "detach"):  # a torch.Tensor, without importing torch here
        t = t.detach().cpu().numpy()
    return np.ascontiguousarray(np.asarray(t, dtype="<f4"))


def write_safetensors(path, tensors):
    """tensors: dict name -> array. Stored as F32 in sorted-name order."""
    header = {}
    blobs = []
    offset = 0
    for name in sorted(tensors):
        arr = to_f32(tensors[name])
        data = arr.tobytes(order="C")
        header[name] = {"dtype": "F32", "shape": list(arr.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    hjson = json.dumps(header, separators=(",", ":"), sort_keys=True).encode("utf-8")
    hjson += b" " * ((-len(hjson)) % 8)  # pad with spaces to a multiple of 8
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hjson)))
        f.write(hjson)
        for b in blobs:
            f.write(b)


def read_safetensors(path):
    """Strict reader of what write_safetensors writes; returns name -> array."""
    with open(path, "rb") as f:
        raw = f.read()
    (hlen,) = struct.unpack("<Q", raw[:8])
    assert hlen % 8 == 0, "header length not a multiple of 8"
    header = json.loads(raw[8:8 + hlen].decode("utf-8"))
    data = raw[8 + hlen:]
    names = list(header)
    assert "__metadata__" not in header
    assert names == sorted(names), "tensors not in sorted-name order"
    out = {}
    expect = 0
    for name in names:
        info = header[name]
        assert set(info) == {"dtype", "shape", "data_offsets"}
        assert info["dtype"] == "F32"
        b, e = info["data_offsets"]
        assert b == expect, "offsets not contiguous"
        n = int(np.prod(info["shape"], dtype=np.int64))
        assert e - b == 4 * n, "byte size does not match shape"
        out[name] = np.frombuffer(data[b:e], dtype="<f4").reshape(info["shape"])
        expect = e
    assert expect == len(data), "trailing bytes after the last tensor"
    return out
