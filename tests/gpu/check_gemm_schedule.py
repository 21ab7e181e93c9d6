#!/usr/bin/env python3
"""Runs the tiled GEMM kernel of convert-linalg-to-gpu on the CPU and
compares it with a float64 reference on random inputs.

As check_attention_schedule.py: the kernel is emitted for one-thread blocks
(gemm-threads-m=1 gemm-threads-n=1: 4 x 4 tiles of C, K in slices of 16),
its launch run as host loops by tfm-test-serial-launch, lowered to LLVM,
built and called through ctypes. Sizes that are not multiples of the tiles
check the edges; C starts non-zero (linalg accumulates into it).

usage: check_gemm_schedule.py TFM_OPT
"""

import ctypes
import os
import sys

import numpy as np

from check_attention_schedule import (build_library, descriptor, memref_type,
                                      run_cases)

# name: (op text with %a %b %c, shapes of a, b, c, dynamic dims, reference)
CASES = {
    "matmul_dynamic": (
        "linalg.matmul ins(%a, %b : {A}, {B}) outs(%c : {C})",
        [13, 37], [37, 9], [13, 9], (0, 1), lambda a, b: a @ b),
    "matmul_static": (
        "linalg.matmul ins(%a, %b : {A}, {B}) outs(%c : {C})",
        [8, 16], [16, 12], [8, 12], (), lambda a, b: a @ b),
    "batch_matmul": (
        "linalg.batch_matmul ins(%a, %b : {A}, {B}) outs(%c : {C})",
        [3, 5, 18], [3, 18, 7], [3, 5, 7], (0,), lambda a, b: a @ b),
    # A linear layer's form: x [rows, K] times W [N, K] transposed.
    "linear_generic": (
        """linalg.generic {{indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
            affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>],
            iterator_types = ["parallel", "parallel", "reduction"]}}
            ins(%a, %b : {A}, {B}) outs(%c : {C}) {{
          ^bb0(%x: f32, %w: f32, %acc: f32):
            %p = arith.mulf %x, %w : f32
            %s = arith.addf %acc, %p : f32
            linalg.yield %s : f32
        }}""",
        [11, 20], [6, 20], [11, 6], (0,), lambda a, b: a @ b.T),
    # Over [batch, seq, K]: two M loops flattened into the GEMM's rows.
    "linear_batched": (
        """linalg.generic {{indexing_maps = [
              affine_map<(b, s, n, k) -> (b, s, k)>,
              affine_map<(b, s, n, k) -> (n, k)>,
              affine_map<(b, s, n, k) -> (b, s, n)>],
            iterator_types = ["parallel", "parallel", "parallel",
                              "reduction"]}}
            ins(%a, %b : {A}, {B}) outs(%c : {C}) {{
          ^bb0(%x: f32, %w: f32, %acc: f32):
            %p = arith.mulf %x, %w : f32
            %s = arith.addf %acc, %p : f32
            linalg.yield %s : f32
        }}""",
        [3, 5, 17], [9, 17], [3, 5, 9], (0, 1),
        lambda a, b: a @ b.T),
}


def run_case(tfm_opt, workdir, name, case, rng):
    text, sa, sb, sc, dynamic, ref = case
    a = rng.standard_normal(sa).astype(np.float32)
    b = rng.standard_normal(sb).astype(np.float32)
    c = rng.standard_normal(sc).astype(np.float32)
    # Dynamic dims are those of A and C (B is a weight in the linear forms,
    # static; in the matmuls its leading dims follow A's).
    types = {k: memref_type(x.shape, dynamic if k != "B" or x.ndim == a.ndim
                            else ()) for k, x in
             (("A", a), ("B", b), ("C", c))}
    source = f"""
func.func @gemm(%a: {types['A']}, %b: {types['B']}, %c: {types['C']}) attributes {{llvm.emit_c_interface}} {{
  {text.format(**types)}
  return
}}
"""
    stem = os.path.join(workdir, name)
    lowered = build_library(tfm_opt, stem, source, [
        "-convert-linalg-to-gpu=threads=1 gemm-threads-m=1 gemm-threads-n=1",
        "-tfm-test-serial-launch"])
    if "llvm.alloca" not in lowered:
        print(f"FAIL {name}: not lowered to the tiled GEMM (no shared tiles)")
        return False
    expected = c.astype(np.float64) + ref(a.astype(np.float64),
                                          b.astype(np.float64))
    descriptors = [descriptor(x) for x in (a, b, c)]
    ctypes.CDLL(stem + ".so")._mlir_ciface_gemm(
        *[ctypes.byref(d) for d in descriptors])
    error = np.abs(c - expected).max()
    ok = np.allclose(c, expected, rtol=1e-5, atol=1e-5)
    print(f"{'ok  ' if ok else 'FAIL'} {name}: max |error| {error:.2e}",
          flush=True)
    return ok


def main():
    return run_cases(__doc__, CASES, run_case, seed=7)


if __name__ == "__main__":
    sys.exit(main())
