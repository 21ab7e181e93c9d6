#!/usr/bin/env python3
"""Generate the GGUF reader's fixtures (tests/reference/gguf/).

    python3 tests/reference/gguf/generate.py             # make a venv, install, run
    python3 tests/reference/gguf/generate.py --python P  # use interpreter P instead
    python3 tests/reference/gguf/generate.py --check     # fail unless a fresh run
                                                         # is byte-identical

Without --python, the script creates tests/reference/gguf/.venv (gitignored),
installs the `gguf` package (llama.cpp's own writer and reader) and numpy
from PyPI into it, and runs itself there.

Writes:
  types.gguf       one tensor per ggml type the reader dequantizes (F32, F16,
                   BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K), each
                   [3, 512]: quantized by the gguf package from seeded values,
                   or (K-quants, which it cannot quantize) seeded random blocks,
                   and metadata of every value type (integers of each width,
                   floats, bool, string, arrays of numbers and of strings)
  types.<TYPE>.npy the gguf package's own dequantization of each tensor
                   (float32 [3, 512]): the reference, bit for bit
  metadata.json    the metadata the test expects, as JSON
"""

import argparse
import filecmp
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
VENV = os.path.join(HERE, ".venv")
PACKAGES = ["gguf==0.19.0", "numpy"]
TYPES = ["F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q4_K",
         "Q5_K", "Q6_K"]
SHAPE = (3, 512)


def in_venv(argv):
    python = os.path.join(VENV, "bin", "python")
    if not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
        subprocess.run([python, "-m", "pip", "install", "-q"] + PACKAGES,
                       check=True)
    return subprocess.run([python, __file__, "--python", python] + argv).returncode


def write(out):
    import gguf
    import numpy as np

    rng = np.random.default_rng(2026)
    writer = gguf.GGUFWriter(os.path.join(out, "types.gguf"), arch="llama")
    metadata = {
        "test.u8": ("uint8", 200), "test.i8": ("int8", -100),
        "test.u16": ("uint16", 60000), "test.i16": ("int16", -30000),
        "test.u32": ("uint32", 4000000000), "test.i32": ("int32", -2000000000),
        "test.u64": ("uint64", 2 ** 40 + 7), "test.i64": ("int64", -(2 ** 40)),
        "test.f32": ("float32", 0.5), "test.f64": ("float64", 1e-300),
        "test.bool": ("bool", True), "test.string": ("string", "héllo\n"),
    }
    for key, (kind, value) in metadata.items():
        getattr(writer, "add_" + kind)(key, value)
    writer.add_array("test.numbers", [1, 2, 3])
    writer.add_array("test.strings", ["a", "", "ccc"])
    for name in TYPES:
        qtype = gguf.GGMLQuantizationType[name]
        values = (rng.standard_normal(SHAPE) * (0.5 + rng.random(SHAPE))) \
            .astype(np.float32)
        # Some exact zeros, large values and a subnormal half scale.
        values[0, :32] = 0
        values[1, 32:64] *= 100
        values[2, 64:96] *= 1e-6
        if name == "F32":
            data = values
        elif name == "F16":
            data = values.astype(np.float16)
        elif name.endswith("_K"):
            # The package quantizes no K-quant: random blocks (any bits are
            # a valid block) with finite f16 scales where the format keeps
            # them.
            elements, size = gguf.GGML_QUANT_SIZES[qtype]
            data = rng.integers(0, 256, (SHAPE[0], SHAPE[1] // elements * size),
                                dtype=np.uint8)
            blocks = data.reshape(-1, size)
            halves = (rng.standard_normal((blocks.shape[0], 2)) * 0.01) \
                .astype(np.float16).view(np.uint8)
            if name == "Q6_K":
                blocks[:, size - 2:] = halves[:, :2]
            else:
                blocks[:, :4] = halves
        else:
            data = gguf.quants.quantize(values, qtype)
        writer.add_tensor("t." + name, data, raw_dtype=qtype)
        np.save(os.path.join(out, f"types.{name}.npy"),
                gguf.quants.dequantize(data, qtype).astype(np.float32)
                .reshape(SHAPE))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    expected = {k: v[1] for k, v in metadata.items()}
    expected["test.numbers"] = [1, 2, 3]
    expected["test.strings"] = ["a", "", "ccc"]
    expected["general.architecture"] = "llama"
    with open(os.path.join(out, "metadata.json"), "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True, ensure_ascii=False)
        f.write("\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--python")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    if not args.python:
        return in_venv(sys.argv[1:])
    if not args.check:
        write(HERE)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        write(tmp)
        differ = [f for f in sorted(os.listdir(tmp))
                  if not filecmp.cmp(os.path.join(tmp, f),
                                     os.path.join(HERE, f), shallow=False)]
        if differ:
            print("differ from a fresh run:", ", ".join(differ))
            return 1
    print("fixtures are up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
