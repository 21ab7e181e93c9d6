#!/usr/bin/env python3
"""Runs the flash-attention kernel of convert-attention-to-gpu on the CPU and
compares it with a float64 reference on random inputs.

The kernel is emitted for one-thread blocks (threads=1, so that barriers are
no-ops), its gpu.launch turned into host loops over the blocks by
tfm-test-serial-launch, the result lowered to LLVM, built into a shared
library and called through ctypes. The tiles are small (block-q, block-k) so
that sequences of a few dozen positions cross several query and key tiles,
partial ones included: the online softmax's rescaling, the causal skip, the
masks' broadcasts and the cache's kv_length/query_offset all run the
emitted code.

usage: check_attention_schedule.py TFM_OPT
"""

import ctypes
import os
import subprocess
import sys
import tempfile

import numpy as np

LLVM = "/usr/lib/llvm-22/bin"
LOWER = ["-canonicalize", "-expand-strided-metadata", "-lower-affine",
         "-convert-scf-to-cf", "-convert-math-to-llvm", "-convert-math-to-libm",
         "-finalize-memref-to-llvm", "-convert-arith-to-llvm",
         "-convert-index-to-llvm", "-convert-func-to-llvm",
         "-convert-cf-to-llvm", "-reconcile-unrealized-casts"]


def memref_type(shape, dynamic, element="f32"):
    dims = ["?" if d in dynamic else str(n) for d, n in enumerate(shape)]
    return "memref<" + "x".join(dims + [element]) + ">"


def descriptor(array):
    """A ctypes memref descriptor viewing `array` (kept alive by the caller)."""
    rank = array.ndim
    pointer = ctypes.c_void_p

    class Descriptor(ctypes.Structure):
        _fields_ = [("allocated", pointer), ("aligned", pointer),
                    ("offset", ctypes.c_int64),
                    ("sizes", ctypes.c_int64 * rank),
                    ("strides", ctypes.c_int64 * rank)]
    d = Descriptor()
    d.allocated = d.aligned = array.ctypes.data
    d.offset = 0
    for i in range(rank):
        d.sizes[i] = array.shape[i]
        d.strides[i] = array.strides[i] // array.itemsize
    return d


def build_library(tfm_opt, stem, source, passes):
    """Writes `source` to STEM.mlir, runs `passes` and LOWER over it with
    tfm-opt and builds the result into STEM.so; returns the lowered MLIR."""
    with open(stem + ".mlir", "w") as f:
        f.write(source)
    subprocess.run([tfm_opt, stem + ".mlir"] + passes + LOWER
                   + ["-o", stem + ".llvm.mlir"], check=True)
    subprocess.run([f"{LLVM}/mlir-translate", "--mlir-to-llvmir",
                    stem + ".llvm.mlir", "-o", stem + ".ll"], check=True)
    subprocess.run([f"{LLVM}/clang", "-O1", "-shared", "-fPIC",
                    "-Wno-override-module", stem + ".ll", "-o", stem + ".so",
                    "-lm"], check=True)
    with open(stem + ".llvm.mlir") as f:
        return f.read()


def run_cases(doc, cases, run_case, seed):
    """The main of a schedule check: `run_case(tfm_opt, workdir, name, case,
    rng)` for every case; 77 (skipped) without the LLVM tools."""
    if len(sys.argv) != 2:
        print(doc)
        return 2
    for tool in ("mlir-translate", "clang"):
        if not os.access(f"{LLVM}/{tool}", os.X_OK):
            print(f"skipped: no {LLVM}/{tool}")
            return 77
    rng = np.random.default_rng(seed)
    failures = 0
    with tempfile.TemporaryDirectory() as workdir:
        for name, case in cases.items():
            failures += not run_case(sys.argv[1], workdir, name, case, rng)
    print(f"{len(cases)} cases, {failures} failed")
    return 1 if failures else 0


def reference(q, k, v, scale, mask, causal, kv_length, query_offset):
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    s = np.einsum("...id,...jd->...ij", q, k) * scale
    sq, sk = s.shape[-2], s.shape[-1]
    valid = np.ones(s.shape, dtype=bool)
    if mask is not None:
        if mask.dtype == bool:
            valid &= ~np.broadcast_to(mask, s.shape)
        else:
            s = s + np.broadcast_to(mask.astype(np.float64), s.shape)
    batch = s.shape[0] if s.ndim > 2 else 1
    offsets = np.zeros(batch, dtype=np.int64)
    limits = np.full(batch, sk, dtype=np.int64)
    if query_offset is not None:
        offsets = np.clip(query_offset, 0, sk)
    if kv_length is not None:
        limits = np.clip(kv_length, 0, sk)
    i = np.arange(sq)[:, None]
    j = np.arange(sk)[None, :]
    for b in range(batch):
        keep = j < limits[b]
        if causal:
            keep = keep & (j <= offsets[b] + i)
        if s.ndim > 2:
            valid[b] &= keep
        else:
            valid &= keep
    s = np.where(valid, s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    p = np.exp(s - m)
    l = p.sum(axis=-1, keepdims=True)
    out = np.einsum("...ij,...jd->...id", p, v)
    return np.where(l > 0, out / np.where(l > 0, l, 1), 0.0)


def run_case(tfm_opt, workdir, name, case, rng):
    shape_q, shape_k, shape_v = case["q"], case["k"], case["v"]
    dynamic = case.get("dynamic", ())
    scale = case.get("scale", 1 / np.sqrt(shape_q[-1]))
    causal = case.get("causal", False)
    q = rng.standard_normal(shape_q).astype(np.float32)
    k = rng.standard_normal(shape_k).astype(np.float32)
    v = rng.standard_normal(shape_v).astype(np.float32)
    o = np.full(shape_q[:-1] + [shape_v[-1]], np.nan, dtype=np.float32)
    # [B, S, H, D] operands, read through indexing maps (the layout of
    # multi-head attention once its head transposes are folded).
    bshd = case.get("bshd", False)
    if bshd:
        q, k, v, o = (np.ascontiguousarray(x.transpose(0, 2, 1, 3))
                      for x in (q, k, v, o))
    args = [q, k, v]
    types = [memref_type(x.shape, dynamic) for x in args]
    signature = [f"%q: {types[0]}", f"%k: {types[1]}", f"%v: {types[2]}"]
    extra = ""
    mask = None
    if "mask" in case:
        mask_shape, kind = case["mask"]
        if kind == "bool":
            mask = rng.random(mask_shape) < 0.3
            element = "i1"
        else:
            mask = (rng.standard_normal(mask_shape) * 2).astype(np.float32)
            element = "f32"
        args.append(mask)
        mtype = memref_type(mask.shape, (), element)
        signature.append(f"%m: {mtype}")
        extra += f" mask(%m : {mtype})"
    kv_length = query_offset = None
    for key in ("kv_length", "query_offset"):
        if key in case:
            values = np.array(case[key], dtype=np.int64)
            args.append(values)
            t = memref_type(values.shape, (), "i64")
            signature.append(f"%{key}: {t}")
            extra += f" {key}(%{key} : {t})"
            if key == "kv_length":
                kv_length = values
            else:
                query_offset = values
    args.append(o)
    otype = memref_type(o.shape, dynamic)
    signature.append(f"%o: {otype}")
    attrs = " {causal}" if causal else ""
    if bshd:
        attrs = (" indexing_maps ["
                 + ", ".join(f"affine_map<(b, h, m, k1, k2, n) -> {r}>"
                             for r in ("(b, m, h, k1)", "(b, k2, h, k1)",
                                       "(b, k2, h, n)", "(b, m, h, n)"))
                 + "]" + attrs)
    source = f"""
func.func @attention({", ".join(signature)}) attributes {{llvm.emit_c_interface}} {{
  tfm.attention ins(%q, %k, %v : {types[0]}, {types[1]}, {types[2]}){extra}
      outs(%o : {otype}) scale {float(scale)!r}{attrs}
  return
}}
"""
    stem = os.path.join(workdir, name)
    tiles = case.get("tiles", "block-q=4 block-k=8")
    build_library(tfm_opt, stem, source, [
        f"-convert-attention-to-gpu=threads=1 accumulators=100000 {tiles}",
        "-tfm-test-serial-launch"])
    library = ctypes.CDLL(stem + ".so")
    descriptors = [descriptor(a) for a in args]
    library._mlir_ciface_attention(*[ctypes.byref(d) for d in descriptors])
    if bshd:
        q, k, v, o = (x.transpose(0, 2, 1, 3) for x in (q, k, v, o))
    expected = reference(q, k, v, scale, mask, causal, kv_length,
                         query_offset)
    error = np.abs(o - expected).max() if o.size else 0.0
    ok = o.size == 0 or np.allclose(o, expected, rtol=1e-5, atol=1e-5)
    print(f"{'ok  ' if ok else 'FAIL'} {name}: max |error| {error:.2e}",
          flush=True)
    return ok


CASES = {
    # Several query and key tiles, partial last ones, dynamic batch and
    # sequence.
    "causal_dynamic": dict(q=[2, 3, 13, 8], k=[2, 3, 13, 8], v=[2, 3, 13, 8],
                           dynamic=(0, 2), causal=True),
    "full_dynamic": dict(q=[2, 3, 13, 8], k=[2, 3, 13, 8], v=[2, 3, 13, 8],
                         dynamic=(0, 2)),
    # Cross attention, Dk != Dv, one query.
    "cross_kdim_vdim": dict(q=[1, 2, 5, 6], k=[1, 2, 19, 6], v=[1, 2, 19, 10]),
    "single_query": dict(q=[3, 2, 1, 8], k=[3, 2, 21, 8], v=[3, 2, 21, 8]),
    # No batch dims.
    "rank2": dict(q=[11, 4], k=[17, 4], v=[17, 5]),
    # Masks: 2-D float, [B,1,1,Sk] boolean key padding, full-rank boolean
    # (rows with every key masked give zeros), 3-D [H, Sq, Sk] float.
    "mask_float_2d": dict(q=[2, 2, 9, 8], k=[2, 2, 10, 8], v=[2, 2, 10, 8],
                          mask=([9, 10], "float")),
    "mask_bool_kpm": dict(q=[3, 2, 7, 4], k=[3, 2, 12, 4], v=[3, 2, 12, 4],
                          mask=([3, 1, 1, 12], "bool"), causal=True),
    "mask_bool_full": dict(q=[2, 2, 6, 4], k=[2, 2, 3, 4], v=[2, 2, 3, 4],
                           mask=([2, 2, 6, 3], "bool")),
    "mask_float_3d": dict(q=[2, 3, 5, 4], k=[2, 3, 9, 4], v=[2, 3, 9, 4],
                          mask=([3, 5, 9], "float")),
    # A cache of 32 positions: per-sequence valid keys and query offsets
    # (decode: one query; prefill chunk: several), offsets past the cache
    # clamped.
    "cache_decode": dict(q=[3, 2, 1, 8], k=[3, 2, 32, 8], v=[3, 2, 32, 8],
                         causal=True, kv_length=[5, 32, 17],
                         query_offset=[4, 31, 16]),
    "cache_chunk": dict(q=[2, 2, 6, 8], k=[2, 2, 32, 8], v=[2, 2, 32, 8],
                        causal=True, kv_length=[20, 9], query_offset=[14, 3]),
    "cache_kv_length": dict(q=[2, 2, 5, 8], k=[2, 2, 32, 8],
                            v=[2, 2, 32, 8], kv_length=[0, 40]),
    # Heads read from [B, S, H, D] through indexing maps (viewed in the
    # default order by memref.transpose before the kernel).
    "bshd_causal": dict(q=[2, 3, 13, 8], k=[2, 3, 13, 8], v=[2, 3, 13, 8],
                        causal=True, bshd=True),
    "bshd_cross": dict(q=[1, 2, 5, 6], k=[1, 2, 19, 6], v=[1, 2, 19, 10],
                       bshd=True),
    # Full 64-key tiles of a 64-wide head.
    "head64": dict(q=[1, 2, 70, 64], k=[1, 2, 70, 64], v=[1, 2, 70, 64],
                   causal=True, tiles="block-q=2 block-k=64"),
}


def main():
    return run_cases(__doc__, CASES, run_case, seed=11)


if __name__ == "__main__":
    sys.exit(main())
