#!/usr/bin/env python3
"""logits-close.py GOT.npy WANT.npy SCALE.npy FRACTION

Compares the last row of GOT (tfm-run's logits, f32 [1, seq, vocab]) with the
first row of WANT (a float64 reference, [steps, vocab]: the prompt's
next-token logits first), within FRACTION times the standard deviation of
SCALE's values (the reference's batch logits). Prints the error in those
units; exits 1 when it is out of bounds. Python's standard library only
(lit's python3 has no numpy): little-endian C-order .npy of f4 or f8.
"""
import ast
import math
import struct
import sys


def load(path):
    data = open(path, "rb").read()
    if data[:6] != b"\x93NUMPY":
        sys.exit(f"{path}: not a .npy file")
    if data[6] == 1:
        (header_len,), start = struct.unpack("<H", data[8:10]), 10
    else:
        (header_len,), start = struct.unpack("<I", data[8:12]), 12
    header = ast.literal_eval(data[start:start + header_len].decode("latin1"))
    if header["fortran_order"] or header["descr"] not in ("<f4", "<f8"):
        sys.exit(f"{path}: {header['descr']} (fortran {header['fortran_order']}), "
                 "want little-endian f4 or f8 in C order")
    body = data[start + header_len:]
    count = len(body) // (4 if header["descr"] == "<f4" else 8)
    values = struct.unpack(("<%df" if header["descr"] == "<f4" else "<%dd") % count, body)
    return header["shape"], values


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    got_shape, got = load(sys.argv[1])
    want_shape, want = load(sys.argv[2])
    _, scale = load(sys.argv[3])
    vocab = want_shape[-1]
    if got_shape[-1] != vocab:
        sys.exit(f"vocabulary {got_shape[-1]}, reference {vocab}")
    last, first = got[-vocab:], want[:vocab]
    mean = sum(scale) / len(scale)
    std = math.sqrt(sum((x - mean) ** 2 for x in scale) / len(scale))
    err = max(abs(a - b) for a, b in zip(last, first)) / std
    bound = float(sys.argv[4])
    print(f"max |tfm - reference| = {err:.3g} x std (bound {bound:g})")
    if not err <= bound:
        sys.exit(1)


if __name__ == "__main__":
    main()
