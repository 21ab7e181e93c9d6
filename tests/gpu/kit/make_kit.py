#!/usr/bin/env python3
"""Builds the GPU kit (docs/gpu.md, "The GPU kit"): every GPU check and
benchmark compiled here, on a machine with LLVM/MLIR and the CUDA toolkit,
into one folder that a bare GPU machine runs with `run.sh` in one call.

usage: make_kit.py --build BUILD --out DIR [--quick] [--jobs N]

DIR gets
  run.sh, run_kit.py, kit_data.py   the runner (tests/gpu/kit), self-contained
  payload.tar.xz                    what run_kit.py unpacks on first use:
    bin/tfm-run, lib/               tfm-run and the shared libraries it needs
                                    that a CUDA image may lack (libfmt)
    artifacts/GROUP/NAME.so         the compiled models
    data/...                        their inputs and expected outputs (.npy)
    manifest.json                   the cases, the sanitizer runs and the
                                    benchmarks
(compressed: the artifacts' kernels and code shrink about 4x, and the
device tool sends at most 64 MiB with the repository).

Correctness cases (each: tfm-run --expected; a float64 or PyTorch reference):
  e2e-sm_90-{f32,f16,bf16}   every seed and reference fixture, the Hugging
                             Face BERT and GPT-2 checkpoints and GPT-2's
                             KV-cache decode steps (chained: each step reads
                             the caches the previous one wrote)
  e2e-sm_80-f32              the same compiled for sm_80 as PTX only, which
                             the driver compiles for the GPU it finds: the
                             code an A100 would run, on a Hopper
  attention-sm_90, gemm-sm_90 (and -sm_80, PTX) the shapes of
                             run_attention.py and run_gemm.py, in f32, f16
                             and bf16
Benchmarks: bench/gpu's attention and GEMM shapes and a post-norm encoder
layer (kit_data.ENCODER, any sequence), timed beside PyTorch on the
device; their inputs (up to 64 MB each) and the encoder's weights are made
there from a seed (kit_data.py), not shipped.

--quick builds a handful of cases of each kind (the ctest of the kit).
"""

import argparse
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
GPU_TESTS = os.path.dirname(HERE)
ROOT = os.path.dirname(os.path.dirname(GPU_TESTS))
sys.path.insert(0, GPU_TESTS)
sys.path.insert(0, HERE)

import kit_data  # noqa: E402
import run_attention  # noqa: E402
import run_gemm  # noqa: E402
from models import example_models  # noqa: E402
from run_reference import HALF_TOLERANCE as HALF_TOL, seed_files  # noqa: E402

# HALF_TOL: the stated tolerances of half-precision whole models
# (run_reference.py's), each output within TOL relative or TOL * max(1, its
# largest |reference|) absolute. On an H200 (docs/gpu.md) the Hugging Face
# models, whose every GEMM runs on tensor cores, stay within a third of it.
# run_attention.py / run_gemm.py: the largest error within 1e-2 of the
# largest reference value.
SHAPE_TOL = 1e-2

# bench/gpu/run.py's shapes (B, H, S, D) and GEMMs (M, N, K).
BENCH_ATTENTION = [(1, 8, 512, 64), (1, 8, 2048, 64), (1, 12, 4096, 64),
                   (4, 8, 512, 64), (1, 8, 1024, 128), (1, 16, 8192, 128),
                   (4, 32, 2048, 128)]
BENCH_GEMM = [(1024, 1024, 1024), (4096, 4096, 4096), (8192, 1024, 4096),
              (77, 3000, 1000)]
BENCH_ENCODER_SEQS = [128, 512, 2048]
QUICK_BENCH_ATTENTION = [(1, 8, 512, 64)]
QUICK_BENCH_GEMM = [(1024, 1024, 1024)]


def log(message):
    print(message, file=sys.stderr, flush=True)


class Kit:
    def __init__(self, out, tfm_compile, tfm_run, jobs):
        self.out = out
        self.tfm_compile = tfm_compile
        self.tfm_run = tfm_run
        self.jobs = jobs
        self.cases, self.bench, self.failures = [], [], []
        self.compiles = []  # (artifact, command) to run in parallel
        self.files = {}  # source path -> kit path, to copy each file once
        # PTX-only artifacts: a toolkit folder with libdevice but no
        # ptxas/fatbinary makes tfm-compile embed the PTX (docs/gpu.md).
        self.ptx_toolkit = os.path.join(out, ".ptx-toolkit")
        os.makedirs(os.path.join(self.ptx_toolkit, "nvvm"), exist_ok=True)
        link = os.path.join(self.ptx_toolkit, "nvvm", "libdevice")
        if not os.path.lexists(link):
            os.symlink("/usr/local/cuda/nvvm/libdevice", link)

    def data(self, source, name=None):
        """The kit path of a file copied into data/ (once)."""
        if source not in self.files:
            relative = os.path.relpath(source, ROOT)
            kit_path = os.path.join("data", name or relative.replace("/", "_"))
            shutil.copyfile(source, os.path.join(self.out, kit_path))
            self.files[source] = kit_path
        return self.files[source]

    def save(self, name, array):
        kit_path = os.path.join("data", name + ".npy")
        np.save(os.path.join(self.out, kit_path), array)
        return kit_path

    def compile(self, group, name, model, weights, arch, dtype, ptx=False,
                extra=()):
        """Queues a compile; returns the artifact's kit path."""
        artifact = os.path.join("artifacts", group,
                                name.replace("/", "_") + ".so")
        command = [self.tfm_compile, model, "--target", "cuda", "--gpu-arch",
                   arch, "--dtype", dtype, "-o",
                   os.path.join(self.out, artifact), *extra]
        if weights:
            command += ["--weights", weights]
        if ptx:
            command += ["--cuda-path", self.ptx_toolkit]
        os.makedirs(os.path.join(self.out, "artifacts", group), exist_ok=True)
        self.compiles.append((artifact, command))
        return artifact

    def run_compiles(self):
        def one(item):
            artifact, command = item
            result = subprocess.run(command, capture_output=True, text=True)
            return artifact, result
        done = 0
        with concurrent.futures.ThreadPoolExecutor(self.jobs) as pool:
            for artifact, result in pool.map(one, self.compiles):
                done += 1
                if result.returncode != 0:
                    self.failures.append((artifact, result.stderr.strip()))
                if done % 50 == 0:
                    log(f"  {done}/{len(self.compiles)} compiled")
        failed = {a for a, _ in self.failures}
        for case in self.cases:
            if case["artifact"] in failed:
                case["compile_error"] = next(
                    e for a, e in self.failures if a == case["artifact"])
        for item in self.bench:
            for dtype, artifact in list(item["artifacts"].items()):
                if artifact in failed:
                    item.setdefault("compile_errors", {})[dtype] = next(
                        e for a, e in self.failures if a == artifact)
                    del item["artifacts"][dtype]


def step(inputs, expected=None, rtol=1e-4, atol=1e-5, outputs=None,
         atol_scaled=False):
    return {"inputs": inputs, "expected": expected or {}, "rtol": rtol,
            "atol": atol, "atol_scaled": atol_scaled,
            "outputs": outputs or {}}


def half_step(inputs, expected, tol):
    """Each output within tol relative, or tol times its largest reference
    value (at least 1): tfm-run --atol-scaled."""
    return step(inputs, expected, rtol=tol, atol=tol, atol_scaled=True)


def max_step(kit, inputs, expected, tol):
    """The largest error within tol of the largest reference value (one
    output): run_attention.py's and run_gemm.py's criterion."""
    scale = max(float(np.abs(np.load(os.path.join(kit.out, p))).max())
                for p in expected.values())
    return step(inputs, expected, rtol=tol, atol=tol * max(scale, 1e-30))


def add_fixtures(kit, targets, quick):
    """Every seed and reference fixture, per (group, arch, dtype, ptx)."""
    models = example_models(ROOT)
    if quick:
        models = [m for m in models if m[0] in (
            "seed/000_self_attention", "sdpa_causal_square_b1_h4_q17_k17_d4_v6",
            "encoder_post_gelu_e12_h3_f20_b2_s7_eps1em6")]
    for model in models:
        name, path, weights, fixture = model
        if fixture:
            folder = fixture["folder"]
            inputs = {i["name"]: kit.data(os.path.join(folder, i["file"]))
                      for i in fixture["inputs"]}
            expected = {o["name"]: kit.data(os.path.join(folder, o["file"]))
                        for o in fixture["outputs"]}
            rtol = fixture.get("rtol", fixture["default_rtol"])
            atol = fixture.get("atol", fixture["default_atol"])
        else:
            files = seed_files(path)
            if files is None:
                continue
            inputs = {n: kit.data(f) for n, f in files[0]}
            expected = {n: kit.data(f) for n, f in files[1]}
            rtol, atol = 1e-4, 1e-5
        for group, arch, dtype, ptx in targets:
            artifact = kit.compile(group, name, path, weights, arch, dtype, ptx)
            if dtype == "f32":
                s = step(inputs, expected, rtol, atol)
            else:
                s = half_step(inputs, expected, HALF_TOL[dtype])
            kit.cases.append({"group": group, "name": name, "arch": arch,
                              "dtype": dtype, "artifact": artifact,
                              "steps": [s]})


def add_hugging_face(kit, targets):
    """BERT and GPT-2 from their checkpoints (tests/reference/hf), and
    GPT-2's prefill + greedy decode steps over the KV cache."""
    hf = os.path.join(ROOT, "tests", "reference", "hf")
    bert, gpt2 = os.path.join(hf, "bert"), os.path.join(hf, "gpt2")
    bert_inputs = {n: kit.data(os.path.join(bert, n + ".npy"))
                   for n in ("input_ids", "token_type_ids", "attention_mask")}
    bert_expected = {n: kit.data(os.path.join(bert, n + ".npy"))
                     for n in ("last_hidden_state", "pooler_output",
                               "sentence_embedding")}
    gpt2_inputs = {"input_ids": kit.data(os.path.join(gpt2, "input_ids.npy"))}
    gpt2_expected = {"logits": kit.data(os.path.join(gpt2, "logits.npy"))}
    decode = decode_steps(kit, gpt2)
    for group, arch, dtype, ptx in targets:
        for name, model, weights, inputs, expected in (
                ("hf/bert", "examples/bert/bert.tfm", bert, bert_inputs,
                 bert_expected),
                ("hf/gpt2", "examples/gpt2/gpt2.tfm", gpt2, gpt2_inputs,
                 gpt2_expected)):
            artifact = kit.compile(group, name, os.path.join(ROOT, model),
                                   os.path.join(weights, "model.safetensors"),
                                   arch, dtype, ptx)
            s = (step(inputs, expected, 1e-4, 1e-4) if dtype == "f32" else
                 half_step(inputs, expected, HALF_TOL[dtype]))
            kit.cases.append({"group": group, "name": name, "arch": arch,
                              "dtype": dtype, "artifact": artifact,
                              "steps": [s]})
        artifact = kit.compile(
            group, "hf/gpt2_kv_decode",
            os.path.join(ROOT, "examples", "generate-c", "gpt2_cached.tfm"),
            os.path.join(gpt2, "model.safetensors"), arch, dtype, ptx)
        steps = []
        for inputs, expected in decode:
            s = (step(inputs, expected, 1e-4, 1e-4) if dtype == "f32" else
                 half_step(inputs, expected, HALF_TOL[dtype]))
            s["outputs"] = {"k_cache": "@k_cache", "v_cache": "@v_cache"}
            steps.append(s)
        kit.cases.append({"group": group, "name": "hf/gpt2_kv_decode",
                          "arch": arch, "dtype": dtype, "artifact": artifact,
                          "steps": steps})


# The Llama-family fixtures (tests/reference/decoders) through the one
# examples/llama/llama.tfm: (folder, checkpoint, logits stem, f32 only).
# The GGUF files' block weights are dequantized at compile time for the GPU
# (tfm.packed_linear is the CPU's form), so the quantized files are held to
# the float64 forward on their dequantized weights, like --keep-fp32 '*' on
# the CPU (tests/e2e/DecoderQuantFixtureTests.cpp).
DECODERS = [(arch, "model.safetensors", "", False)
            for arch in ("llama", "qwen2", "gemma3", "qwen3", "phi3",
                         "phi3-longrope")] + [
    (arch, "model-q.gguf", "model-q.", True)
    for arch in ("llama", "qwen2", "gemma3")] + [
    (arch + "-kquant", "model.gguf", "model.", True)
    for arch in ("llama", "qwen2", "gemma3")]
# Half precision: bf16 weights move these tiny random decoders' logits by
# up to 4.8% of their largest value (phi3-longrope's fourth decode step,
# where f16 moves them 0.8%): the CPU's bf16 build of the same model gives
# the same errors to two digits, so this is the weights' rounding, not the
# GPU's. The other models' 3e-2 would fail it.
DECODER_HALF_TOL = {"f16": HALF_TOL["f16"], "bf16": 6e-2}
# Caches of 64 positions: the prompt and its 8 greedy steps take 13, and
# phi3-longrope's short factors hold up to its original context of 64.
DECODER_CAPACITY = 64


def add_decoders(kit, targets, quick):
    """Each decoder fixture compiled with tfm.last_logits=true: the batch
    [2, 7] prefill at past 0 (the last position of transformers' or the
    float64 forward's logits), then the prompt's prefill and 7 decode steps
    chained over the caches (each step feeds the reference's greedy token at
    past = tokens so far, against its decode logits). The caches start as
    NaN: attention reading a row never written shows."""
    folder = os.path.join(ROOT, "tests", "reference", "decoders")
    model = os.path.join(ROOT, "examples", "llama", "llama.tfm")
    chosen = DECODERS[:1] + DECODERS[6:7] if quick else DECODERS
    for arch, file, stem, quantized in chosen:
        d = os.path.join(folder, arch)
        with open(os.path.join(d, "config.json")) as f:
            config = json.load(f)
        heads = config["num_attention_heads"]
        head_dim = config.get("head_dim") or config["hidden_size"] // heads
        key = f"decoders/{arch}/{file}"
        tag = key.replace("/", "_")

        def cache(batch):
            shape = (config["num_hidden_layers"], batch,
                     config["num_key_value_heads"], DECODER_CAPACITY, head_dim)
            return kit.save(f"{tag}_nan_cache_b{batch}",
                            np.full(shape, np.nan, np.float32))

        def ref(name):
            # stem "" names the f32 checkpoint's transformers references.
            return np.load(os.path.join(d, f"{stem}{name}.npy"))

        ids = np.load(os.path.join(d, "input_ids.npy"))
        logits = ref("logits").astype(np.float32)
        decode = ref("decode_logits").astype(np.float32)
        tokens = ref("generate_tokens")
        prompt = np.load(os.path.join(d, "generate_prompt.npy"))
        P, vocab = prompt.shape[1], decode.shape[1]
        batch_inputs = {
            "input_ids": kit.save(f"{tag}_batch_ids", ids),
            "past": kit.save(f"{tag}_batch_past",
                             np.zeros(ids.shape[0], np.int64)),
            "k_cache": cache(ids.shape[0]), "v_cache": cache(ids.shape[0])}
        batch_expected = {"logits": kit.save(f"{tag}_batch_logits",
                                             logits[:, -1:, :])}
        decode_steps = []
        for s in range(decode.shape[0]):
            past = 0 if s == 0 else P + s - 1
            step_ids = prompt if s == 0 else tokens[:, past:past + 1]
            inputs = {
                "input_ids": kit.save(f"{tag}_ids{s}", step_ids.astype(np.int64)),
                "past": kit.save(f"{tag}_past{s}", np.array([past], np.int64)),
                "k_cache": cache(1) if s == 0 else "@k_cache",
                "v_cache": cache(1) if s == 0 else "@v_cache"}
            decode_steps.append((inputs, {"logits": kit.save(
                f"{tag}_decode_logits{s}", decode[s].reshape(1, 1, vocab))}))
        # The quantized files against their float64 forward: 1e-4 of the
        # logits' spread, as the CPU's f32 build of them is held.
        spread = float(logits.std())
        for group, arch_sm, dtype, ptx in targets:
            if quantized and dtype != "f32":
                continue
            artifact = kit.compile(
                group, key, model, os.path.join(d, file), arch_sm, dtype, ptx,
                extra=["--set", "tfm.last_logits=true",
                       "--set", f"tfm.capacity={DECODER_CAPACITY}"])

            def checked(inputs, expected):
                if dtype != "f32":
                    return half_step(inputs, expected,
                                     DECODER_HALF_TOL[dtype])
                if quantized:
                    return step(inputs, expected, 1e-4, 1e-4 * spread)
                return step(inputs, expected, 1e-4, 1e-4)

            kit.cases.append({"group": group, "name": key, "arch": arch_sm,
                              "dtype": dtype, "artifact": artifact,
                              "steps": [checked(batch_inputs, batch_expected)]})
            steps = []
            for inputs, expected in decode_steps:
                s = checked(inputs, expected)
                s["outputs"] = {"k_cache": "@k_cache", "v_cache": "@v_cache"}
                steps.append(s)
            kit.cases.append({"group": group, "name": key + "/decode",
                              "arch": arch_sm, "dtype": dtype,
                              "artifact": artifact, "steps": steps})


def decode_steps(kit, gpt2):
    """(inputs, expected) of the prefill and each decode step of
    gpt2_cached.tfm, checked against transformers' KV-cached decode logits
    (decode_logits.npy): step s feeds token P + s - 1 of generate()'s tokens
    at past = P + s - 1. transformers recorded the prefill's last position
    only; its expected logits are the CPU build's (tests/e2e checks those
    against transformers), whose last row must match transformers' here."""
    prompt = np.load(os.path.join(gpt2, "generate_prompt.npy"))
    tokens = np.load(os.path.join(gpt2, "generate_tokens.npy"))
    logits = np.load(os.path.join(gpt2, "decode_logits.npy"))
    P, vocab = prompt.shape[1], logits.shape[1]
    zeros = kit.save("gpt2_decode_cache0",
                     np.zeros((2, 1, 4, 64, 16), np.float32))
    inputs = {"input_ids": kit.save("gpt2_decode_ids0", prompt),
              "past": kit.save("gpt2_decode_past0", np.zeros(1, np.int64)),
              "k_cache": zeros, "v_cache": zeros}
    work = os.path.join(kit.out, ".models")
    os.makedirs(work, exist_ok=True)
    cpu = os.path.join(work, "gpt2_cached_cpu.so")
    prefill = os.path.join(work, "gpt2_prefill_logits.npy")
    subprocess.run([kit.tfm_compile, os.path.join(
        ROOT, "examples", "generate-c", "gpt2_cached.tfm"), "--weights",
        os.path.join(gpt2, "model.safetensors"), "-o", cpu], check=True)
    command = [kit.tfm_run, cpu, "--quiet", "--output", f"logits={prefill}"]
    for name, path in inputs.items():
        command += ["--input", f"{name}={os.path.join(kit.out, path)}"]
    subprocess.run(command, check=True, capture_output=True)
    prefill_logits = np.load(prefill)
    if not np.allclose(prefill_logits[0, -1], logits[0], rtol=1e-4,
                       atol=1e-4):
        sys.exit("make_kit: the CPU prefill of gpt2_cached.tfm does not "
                 "match transformers' first decode logits")
    steps = [(inputs, {"logits": kit.save("gpt2_decode_logits0",
                                          prefill_logits)})]
    for s in range(1, logits.shape[0]):
        past = P + s - 1
        steps.append((
            {"input_ids": kit.save(f"gpt2_decode_ids{s}",
                                   tokens[:, past:past + 1].astype(np.int64)),
             "past": kit.save(f"gpt2_decode_past{s}",
                              np.array([past], np.int64)),
             "k_cache": "@k_cache", "v_cache": "@v_cache"},
            {"logits": kit.save(f"gpt2_decode_logits{s}",
                                logits[s].reshape(1, 1, vocab))}))
    return steps


def add_shapes(kit, arches, quick):
    """run_attention.py's and run_gemm.py's shapes against float64."""
    rng = np.random.default_rng(11)
    work = os.path.join(kit.out, ".models")
    os.makedirs(work, exist_ok=True)
    shapes = run_attention.SHAPES[:2] if quick else run_attention.SHAPES
    for n, (B, H, Sq, Sk, D, causal, dynamic) in enumerate(shapes):
        name = f"attention_b{B}_h{H}_q{Sq}_k{Sk}_d{D}" + (
            "_causal" if causal else "") + ("_dyn" if dynamic else "")
        model = os.path.join(work, name + ".tfm")
        with open(model, "w") as f:
            f.write(run_attention.model(B, H, Sq, Sk, D, causal, dynamic))
        q = rng.standard_normal((B, H, Sq, D)).astype(np.float32)
        k = rng.standard_normal((B, H, Sk, D)).astype(np.float32)
        v = rng.standard_normal((B, H, Sk, D)).astype(np.float32)
        y = run_attention.reference(q, k, v, causal)
        inputs = {"q": kit.save(name + "_q", q), "k": kit.save(name + "_k", k),
                  "v": kit.save(name + "_v", v)}
        expected = {"y": kit.save(name + "_y", y.astype(np.float32))}
        add_shape_cases(kit, "attention", name, model, None, inputs, expected,
                        arches, sanitize=n == 0)
    gemm_cases = list(run_gemm.cases(np.random.default_rng(13)))
    for n, (name, text, weights, inputs, y) in enumerate(
            gemm_cases[:2] if quick else gemm_cases):
        model = os.path.join(work, name + ".tfm")
        with open(model, "w") as f:
            f.write(text)
        weights_path = None
        if weights:
            weights_path = os.path.join(work, name + ".safetensors")
            run_gemm.write_safetensors(weights_path, weights)
        inputs = {k: kit.save(f"{name}_{k}", v) for k, v in inputs.items()}
        expected = {"y": kit.save(name + "_y", y.astype(np.float32))}
        add_shape_cases(kit, "gemm", name, model, weights_path, inputs,
                        expected, arches, sanitize=n == 0)


def add_shape_cases(kit, kind, name, model, weights, inputs, expected, arches,
                    sanitize):
    for arch, ptx in arches:
        group = f"{kind}-{arch}"
        for dtype in ("f32", "f16", "bf16"):
            artifact = kit.compile(group, f"{name}_{dtype}", model, weights,
                                   arch, dtype, ptx)
            s = (step(inputs, expected, 1e-4, 1e-5) if dtype == "f32" else
                 max_step(kit, inputs, expected, SHAPE_TOL))
            kit.cases.append({"group": group, "name": name, "arch": arch,
                              "dtype": dtype, "artifact": artifact,
                              "steps": [s],
                              "sanitize": sanitize and not ptx
                              and dtype != "f16"})


SANITIZED = {"seed/000_self_attention", "encoder_post_gelu_e12_h3_f20_b2_s7_eps1em6",
             "hf/bert", "hf/gpt2_kv_decode",
             "decoders/llama/model.safetensors/decode",
             "decoders/gemma3-kquant/model.gguf/decode"}


def add_bench(kit, quick):
    work = os.path.join(kit.out, ".models")
    for B, H, S, D in QUICK_BENCH_ATTENTION if quick else BENCH_ATTENTION:
        for causal in (False, True):
            name = f"attn_b{B}_h{H}_s{S}_d{D}" + ("_causal" if causal else "")
            model = os.path.join(work, name + ".tfm")
            with open(model, "w") as f:
                f.write(run_attention.model(B, H, S, S, D, causal, False))
            kit.bench.append({
                "kind": "attention", "name": name, "B": B, "H": H, "S": S,
                "D": D, "causal": causal,
                "flops": 4 * B * H * S * S * D // (2 if causal else 1),
                "artifacts": {d: kit.compile("bench", f"{name}_{d}", model,
                                             None, "sm_90", d)
                              for d in ("f32", "bf16")}})
    for M, N, K in QUICK_BENCH_GEMM if quick else BENCH_GEMM:
        name = f"gemm_{M}_{N}_{K}"
        model = os.path.join(work, name + ".tfm")
        with open(model, "w") as f:
            f.write(f"model {name}\ninput a: f32[{M}, {K}]\n"
                    f"input b: f32[{K}, {N}]\ny = a @ b\noutput y\n")
        kit.bench.append({
            "kind": "gemm", "name": name, "M": M, "N": N, "K": K,
            "flops": 2 * M * N * K,
            "artifacts": {d: kit.compile("bench", f"{name}_{d}", model, None,
                                         "sm_90", d)
                          for d in ("f32", "f16", "bf16")}})
    # A post-norm nn.TransformerEncoderLayer(512, 8, 2048), batch_first, any
    # sequence length; its weights are kit_data's (made again on the GPU
    # machine for PyTorch).
    E, H, F = kit_data.ENCODER["E"], kit_data.ENCODER["H"], kit_data.ENCODER["F"]
    model = os.path.join(work, "encoder.tfm")
    with open(model, "w") as f:
        f.write(kit_data.encoder_source())
    weights = os.path.join(work, "encoder.safetensors")
    run_gemm.write_safetensors(weights, kit_data.encoder_weights())
    seqs = BENCH_ENCODER_SEQS[:1] if quick else BENCH_ENCODER_SEQS
    kit.bench.append({
        "kind": "encoder", "name": f"encoder_e{E}_h{H}_f{F}", "E": E, "H": H,
        "F": F, "seqs": seqs,
        "flops": {str(S): 2 * S * (4 * E * E + 2 * E * F) + 4 * S * S * E
                  for S in seqs},
        "artifacts": {d: kit.compile("bench", f"encoder_{d}", model, weights,
                                     "sm_90", d)
                      for d in ("f32", "bf16")}})


def copy_runtime(kit, tfm_run):
    """tfm-run and the shared libraries a bare CUDA image may not have."""
    os.makedirs(os.path.join(kit.out, "bin"), exist_ok=True)
    os.makedirs(os.path.join(kit.out, "lib"), exist_ok=True)
    shutil.copy2(tfm_run, os.path.join(kit.out, "bin", "tfm-run"))
    ldd = subprocess.run(["ldd", tfm_run], capture_output=True, text=True)
    shipped = []
    for line in ldd.stdout.splitlines():
        parts = line.split()
        # glibc and the C++ runtime come with any Linux image; the rest
        # (fmt) travels.
        if len(parts) >= 3 and parts[1] == "=>" and not any(
                parts[0].startswith(p) for p in (
                    "libc.", "libm.", "libstdc++", "libgcc_s", "libdl.",
                    "libpthread", "librt.", "ld-linux", "linux-vdso")):
            shutil.copy2(parts[2], os.path.join(kit.out, "lib", parts[0]))
            shipped.append(parts[0])
    return shipped


PAYLOAD = ("bin", "lib", "artifacts", "data", "manifest.json")


def pack(out):
    """Moves the payload into payload.tar.xz (xz's multi-threaded -9)."""
    log("make_kit: compressing")
    subprocess.run(f"tar -cf - {' '.join(PAYLOAD)} | xz -9 -T0 > "
                   "payload.tar.xz", shell=True, check=True, cwd=out)
    for name in PAYLOAD:
        path = os.path.join(out, name)
        if os.path.isdir(path):
            shutil.rmtree(path)
        else:
            os.remove(path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--out", default=os.path.join(ROOT, "gpu-kit"))
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args()
    tfm_compile = os.path.join(args.build, "bin", "tfm-compile")
    tfm_run = os.path.join(args.build, "bin", "tfm-run")
    for tool in (tfm_compile, tfm_run):
        if not os.access(tool, os.X_OK):
            sys.exit(f"make_kit: {tool} is missing: build it first")
    if not os.path.exists("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc"):
        sys.exit("make_kit: the CUDA toolkit (/usr/local/cuda) is needed")
    start = time.time()
    out = os.path.abspath(args.out)
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(os.path.join(out, "data"))
    kit = Kit(out, tfm_compile, tfm_run, args.jobs)

    # ptxas takes two thirds of a compile: the f32 models get cubins (what
    # a user's artifact holds), the f16/bf16 ones and sm_80 PTX only, which
    # the driver compiles at load (the same ptxas, on the GPU machine).
    sm90 = [(f"e2e-sm_90-{d}", "sm_90", d, d != "f32")
            for d in ("f32", "f16", "bf16")]
    sm80 = [("e2e-sm_80-f32", "sm_80", "f32", True)]
    add_fixtures(kit, sm90 if args.quick else sm90 + sm80, args.quick)
    add_hugging_face(kit, sm90 if args.quick else sm90 + sm80)
    add_decoders(kit, sm90 if args.quick else sm90 + sm80, args.quick)
    for case in kit.cases:
        case["sanitize"] = (case["name"] in SANITIZED and case["arch"] == "sm_90"
                            and case["dtype"] in ("f32", "bf16"))
    add_shapes(kit, [("sm_90", False)] if args.quick else
               [("sm_90", False), ("sm_80", True)], args.quick)
    add_bench(kit, args.quick)
    log(f"make_kit: compiling {len(kit.compiles)} artifacts on {args.jobs} "
        "threads")
    kit.run_compiles()
    shipped = copy_runtime(kit, tfm_run)
    for name in ("run.sh", "run_kit.py", "kit_data.py"):
        shutil.copy2(os.path.join(HERE, name), os.path.join(out, name))
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump({"commit": commit, "quick": args.quick,
                   "built": time.strftime("%Y-%m-%d %H:%M:%S"),
                   "shipped_libraries": shipped, "cases": kit.cases,
                   "bench": kit.bench}, f, indent=1)
    shutil.rmtree(os.path.join(out, ".models"))
    shutil.rmtree(kit.ptx_toolkit)
    unpacked = sum(os.path.getsize(os.path.join(d, f))
                   for d, _, files in os.walk(out) for f in files)
    pack(out)
    size = sum(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out))
    log(f"make_kit: {out}: {len(kit.cases)} cases, {len(kit.bench)} "
        f"benchmarks, {len(kit.compiles)} artifacts "
        f"({len(kit.failures)} failed to compile), {size / 2**20:.1f} MiB "
        f"({unpacked / 2**20:.0f} MiB unpacked), "
        f"{time.time() - start:.0f} s")
    for artifact, error in kit.failures[:10]:
        log(f"  compile failed: {artifact}: {error.splitlines()[-1] if error else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
