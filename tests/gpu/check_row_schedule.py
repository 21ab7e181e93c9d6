#!/usr/bin/env python3
"""Runs convert-linalg-to-gpu's row reductions on the CPU and compares them
with a float64 reference, as check_gemm_schedule.py does for the GEMM.

A layer norm as bufferization leaves it: one buffer filled with 0 and
copied into each reduction's accumulator (mean, variance), the variance
computed into the filled buffer itself, then the normalization. On the GPU
each reduction starts its rows from the fill's constant in its own kernel:
no fill or copy kernels (3 launches instead of 6), the launch count checked
too. Threads of one (serial) block, rows of odd and dynamic sizes.

usage: check_row_schedule.py TFM_OPT
"""

import ctypes
import os
import subprocess
import sys

import numpy as np

from check_attention_schedule import build_library, descriptor, run_cases

LAYER_NORM = """
func.func @rows(%x: memref<?x{N}xf32>, %y: memref<?x{N}xf32>) attributes {{llvm.emit_c_interface}} {{
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = arith.constant {N}.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %rows = memref.dim %x, %c0 : memref<?x{N}xf32>
  %base = memref.alloc(%rows) : memref<?xf32>
  linalg.fill ins(%zero : f32) outs(%base : memref<?xf32>)
  %sum = memref.alloc(%rows) : memref<?xf32>
  memref.copy %base, %sum : memref<?xf32> to memref<?xf32>
  linalg.generic {{indexing_maps = [affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (r)>],
      iterator_types = ["parallel", "reduction"]}}
      ins(%x : memref<?x{N}xf32>) outs(%sum : memref<?xf32>) {{
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  }}
  linalg.generic {{indexing_maps = [affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (r)>,
      affine_map<(r, c) -> (r)>], iterator_types = ["parallel", "reduction"]}}
      ins(%x, %sum : memref<?x{N}xf32>, memref<?xf32>) outs(%base : memref<?xf32>) {{
  ^bb0(%in: f32, %s: f32, %out: f32):
    %mean = arith.divf %s, %n : f32
    %d = arith.subf %in, %mean : f32
    %sq = arith.mulf %d, %d : f32
    %acc = arith.addf %out, %sq : f32
    linalg.yield %acc : f32
  }}
  linalg.generic {{indexing_maps = [affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (r)>,
      affine_map<(r, c) -> (r)>, affine_map<(r, c) -> (r, c)>],
      iterator_types = ["parallel", "parallel"]}}
      ins(%x, %sum, %base : memref<?x{N}xf32>, memref<?xf32>, memref<?xf32>) outs(%y : memref<?x{N}xf32>) {{
  ^bb0(%in: f32, %s: f32, %v: f32, %out: f32):
    %mean = arith.divf %s, %n : f32
    %var = arith.divf %v, %n : f32
    %ve = arith.addf %var, %eps : f32
    %sd = math.sqrt %ve : f32
    %d = arith.subf %in, %mean : f32
    %r = arith.divf %d, %sd : f32
    linalg.yield %r : f32
  }}
  memref.dealloc %sum : memref<?xf32>
  memref.dealloc %base : memref<?xf32>
  return
}}
"""

# name: (rows, columns)
CASES = {"layer_norm_13x37": (13, 37), "layer_norm_1x8": (1, 8),
         "layer_norm_70x12": (70, 12)}
LAUNCHES = 3


def run_case(tfm_opt, workdir, name, case, rng):
    rows, n = case
    x = (rng.standard_normal((rows, n)) * 3 + 1).astype(np.float32)
    y = np.zeros_like(x)
    stem = os.path.join(workdir, name)
    passes = ["-convert-linalg-to-gpu=threads=1", "-tfm-test-serial-launch"]
    build_library(tfm_opt, stem, LAYER_NORM.format(N=n), passes)
    kernels = subprocess.run(
        [tfm_opt, stem + ".mlir", "-convert-linalg-to-gpu=threads=1"],
        capture_output=True, text=True, check=True).stdout.count("gpu.launch ")
    d = [descriptor(v) for v in (x, y)]
    ctypes.CDLL(stem + ".so")._mlir_ciface_rows(*[ctypes.byref(v) for v in d])
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=1, keepdims=True)
    expected = (x64 - mean) / np.sqrt(x64.var(axis=1, keepdims=True) + 1e-5)
    error = np.abs(y - expected).max()
    ok = np.allclose(y, expected, rtol=1e-4, atol=1e-4) and kernels == LAUNCHES
    print(f"{'ok  ' if ok else 'FAIL'} {name}: max |error| {error:.2e}, "
          f"{kernels} launches (expected {LAUNCHES})", flush=True)
    return ok


def main():
    return run_cases(__doc__, CASES, run_case, seed=5)


if __name__ == "__main__":
    sys.exit(main())
