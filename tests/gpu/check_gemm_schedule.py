#!/usr/bin/env python3
"""Runs the tiled GEMM kernel of convert-linalg-to-gpu on the CPU and
compares it with a float64 reference on random inputs.

As check_attention_schedule.py: the kernel is emitted for one-thread blocks
(gemm-threads-m=1 gemm-threads-n=1: 4 x 4 tiles of C, K in slices of 16),
its launch run as host loops by tfm-test-serial-launch, lowered to LLVM,
built and called through ctypes. Sizes that are not multiples of the tiles
check the edges; C starts non-zero (linalg accumulates into it).

The FUSED cases are linear layers with the elementwise ops the GEMM takes
into its kernel (ContractionFusion): a bias broadcast into C before it, an
activation and a residual after it, in place or into another buffer; and
one where a later reader of C keeps the epilogue out. Each also checks the
number of launches convert-linalg-to-gpu leaves.

usage: check_gemm_schedule.py TFM_OPT
"""

import ctypes
import os
import subprocess
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


LINEAR = """linalg.generic {{indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
      affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>],
      iterator_types = ["parallel", "parallel", "reduction"]}}
      ins(%x, %w : memref<?x{K}xf32>, memref<{N}x{K}xf32>) outs({C} : memref<?x{N}xf32>) {{
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
  }}"""
BIAS = """linalg.generic {{indexing_maps = [affine_map<(m, n) -> (n)>,
      affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}}
      ins(%bias : memref<{N}xf32>) outs({C} : memref<?x{N}xf32>) {{
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
  }}"""
# relu(c) + 0.5 r, written to %y.
EPILOGUE = """linalg.generic {{indexing_maps = [affine_map<(m, n) -> (m, n)>,
      affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>],
      iterator_types = ["parallel", "parallel"]}}
      ins({C}, %r : memref<?x{N}xf32>, memref<?x{N}xf32>) outs(%y : memref<?x{N}xf32>) {{
    ^bb0(%v: f32, %res: f32, %out: f32):
      %zero = arith.constant 0.0 : f32
      %half = arith.constant 0.5 : f32
      %relu = arith.maximumf %v, %zero : f32
      %h = arith.mulf %res, %half : f32
      %s = arith.addf %relu, %h : f32
      linalg.yield %s : f32
  }}"""
# y = 2 y + index(n), in place on %y (C itself).
IN_PLACE = """linalg.generic {{indexing_maps = [affine_map<(m, n) -> (m, n)>,
      affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}}
      ins(%y : memref<?x{N}xf32>) outs(%y : memref<?x{N}xf32>) {{
    ^bb0(%v: f32, %out: f32):
      %n = linalg.index 1 : index
      %i = arith.index_cast %n : index to i32
      %f = arith.sitofp %i : i32 to f32
      %two = arith.addf %v, %v : f32
      %s = arith.addf %two, %f : f32
      linalg.yield %s : f32
  }}"""
SIGNATURE = ("%x: memref<?x{K}xf32>, %w: memref<{N}x{K}xf32>, "
             "%bias: memref<{N}xf32>, %r: memref<?x{N}xf32>, "
             "%y: memref<?x{N}xf32>")
TEMPORARY = """%c0 = arith.constant 0 : index
  %rows = memref.dim %x, %c0 : memref<?x{K}xf32>
  %t = memref.alloc(%rows) : memref<?x{N}xf32>"""

# name: (body, reference from (x, w, bias, r, y), launches after
# convert-linalg-to-gpu)
FUSED = {
    # Bias, GEMM and epilogue in one kernel; the temporary never written.
    "linear_bias_relu_residual": (
        lambda N, K: "\n  ".join([
            TEMPORARY.format(N=N, K=K), BIAS.format(C="%t", N=N),
            LINEAR.format(C="%t", N=N, K=K), EPILOGUE.format(C="%t", N=N),
            f"memref.dealloc %t : memref<?x{N}xf32>"]),
        lambda x, w, bias, r, y: np.maximum(x @ w.T + bias, 0) + 0.5 * r, 1),
    # C is the output: bias into it, the GEMM, then an in-place epilogue
    # that reads its index.
    "linear_bias_in_place": (
        lambda N, K: "\n  ".join([
            BIAS.format(C="%y", N=N), LINEAR.format(C="%y", N=N, K=K),
            IN_PLACE.format(N=N)]),
        lambda x, w, bias, r, y: 2 * (x @ w.T + bias)
        + np.arange(w.shape[0])[None, :], 1),
    # A copy of C after the epilogue reads it: C must be written, so the
    # epilogue keeps its own kernel (the bias still fuses).
    "epilogue_kept_for_a_later_reader": (
        lambda N, K: "\n  ".join([
            TEMPORARY.format(N=N, K=K), BIAS.format(C="%t", N=N),
            LINEAR.format(C="%t", N=N, K=K), EPILOGUE.format(C="%t", N=N),
            f"memref.copy %t, %r : memref<?x{N}xf32> to memref<?x{N}xf32>",
            f"memref.dealloc %t : memref<?x{N}xf32>"]),
        lambda x, w, bias, r, y: np.maximum(x @ w.T + bias, 0) + 0.5 * r, 3),
}


def launches(tfm_opt, stem):
    result = subprocess.run(
        [tfm_opt, stem + ".mlir",
         "-convert-linalg-to-gpu=threads=1 gemm-threads-m=1 gemm-threads-n=1"],
        capture_output=True, text=True, check=True)
    return result.stdout.count("gpu.launch ")


def run_fused_case(tfm_opt, workdir, name, case, rng):
    body, ref, expected_launches = case
    rows, n, k = 13, 9, 37
    x = rng.standard_normal((rows, k)).astype(np.float32)
    w = rng.standard_normal((n, k)).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32)
    r = rng.standard_normal((rows, n)).astype(np.float32)
    y = rng.standard_normal((rows, n)).astype(np.float32)
    source = f"""
func.func @gemm({SIGNATURE.format(N=n, K=k)}) attributes {{llvm.emit_c_interface}} {{
  {body(n, k)}
  return
}}
"""
    stem = os.path.join(workdir, name)
    expected = ref(*(v.astype(np.float64) for v in (x, w, bias, r, y)))
    build_library(tfm_opt, stem, source, [
        "-convert-linalg-to-gpu=threads=1 gemm-threads-m=1 gemm-threads-n=1",
        "-tfm-test-serial-launch"])
    count = launches(tfm_opt, stem)
    descriptors = [descriptor(v) for v in (x, w, bias, r, y)]
    ctypes.CDLL(stem + ".so")._mlir_ciface_gemm(
        *[ctypes.byref(d) for d in descriptors])
    error = np.abs(y - expected).max()
    ok = (np.allclose(y, expected, rtol=1e-5, atol=1e-5)
          and count == expected_launches)
    print(f"{'ok  ' if ok else 'FAIL'} {name}: max |error| {error:.2e}, "
          f"{count} launches (expected {expected_launches})", flush=True)
    return ok


def run_case(tfm_opt, workdir, name, case, rng):
    if name in FUSED:
        return run_fused_case(tfm_opt, workdir, name, case, rng)
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
    return run_cases(__doc__, {**CASES, **FUSED}, run_case, seed=7)


if __name__ == "__main__":
    sys.exit(main())
