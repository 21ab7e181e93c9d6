#!/usr/bin/env python3
"""check-embedded-weights.py SECTION.bin SIDECAR.safetensors

Checks that the weights section dumped from an embedded-weights object
holds the same tensors as the sidecar that --weights-mode external writes
for the same model: in the sidecar's order, each starting at the next
64-byte boundary, zeros in between, nothing after the last one. Prints
`ok: N tensors, B bytes`; exits 1 naming the first difference.
"""
import json
import struct
import sys


def main():
    section = open(sys.argv[1], "rb").read()
    sidecar = open(sys.argv[2], "rb").read()
    (header_size,) = struct.unpack("<Q", sidecar[:8])
    header = json.loads(sidecar[8 : 8 + header_size])
    data = sidecar[8 + header_size :]
    tensors = sorted(
        (v["data_offsets"], k) for k, v in header.items() if k != "__metadata__"
    )
    offset = 0
    for (begin, end), name in tensors:
        start = (offset + 63) // 64 * 64
        if any(section[offset:start]):
            sys.exit(f"non-zero padding before '{name}' at {offset}")
        if section[start : start + end - begin] != data[begin:end]:
            sys.exit(f"tensor '{name}' differs (section offset {start})")
        offset = start + end - begin
    if offset != len(section):
        sys.exit(f"section has {len(section)} bytes, the tensors end at {offset}")
    print(f"ok: {len(tensors)} tensors, {offset} bytes")


if __name__ == "__main__":
    main()
