#!/usr/bin/env python3
"""weights-vs-checkpoint.py SECTION.bin CHECKPOINT.safetensors MAX_RATIO

Compares the bytes of an object's weights section with the bytes of the
tensors its checkpoint holds, and prints `weights/checkpoint = R`; exits 1
when R exceeds MAX_RATIO (a weight stored twice, such as an LM head tied to
the token embedding kept both unpacked and packed, shows as R well above 1).
"""
import json
import struct
import sys


def main():
    section = len(open(sys.argv[1], "rb").read())
    checkpoint = open(sys.argv[2], "rb").read()
    (header_size,) = struct.unpack("<Q", checkpoint[:8])
    header = json.loads(checkpoint[8 : 8 + header_size])
    tensors = sum(
        v["data_offsets"][1] - v["data_offsets"][0]
        for k, v in header.items()
        if k != "__metadata__"
    )
    ratio = section / tensors
    print(f"weights/checkpoint = {ratio:.3f} ({section} / {tensors} bytes)")
    if ratio > float(sys.argv[3]):
        sys.exit(f"more than {sys.argv[3]} times the checkpoint")


if __name__ == "__main__":
    main()
