#!/usr/bin/env python3
"""bench/decode/vs_llama_cpp.py: tfm against llama.cpp on the same GGUF file.

    bench/decode/vs_llama_cpp.py (--llama-bench PATH | --python VENV/bin/python)
        [--types Q8_0,Q4_0]
        [--threads 1,2] [--position 64] [--prefill 32] [--runs 30]
        [--tfm-bin build/bin] [--work DIR] [--torch PYTHON] [--bandwidth]
        [make_gguf_q8.py size options: --layers --hidden --heads --kv-heads
         --ffn --vocab]

Writes a random SmolLM2-135M-shaped Llama GGUF per type with make_gguf_q8.py
(--llama-cpp: the keys and placeholder vocabulary llama.cpp needs), compiles
examples/llama/llama.tfm against it, and times, on each thread count:
  decode   one token at --position (tfm-run --bench; llama.cpp: a prompt of
           --position tokens evaluated, then single-token evals, the
           position growing by one a run), min and median ms;
  prefill  --prefill tokens from an empty cache (tfm-run --bench; llama.cpp:
           eval after reset), min ms;
with PyTorch eager (--torch: transformers' LlamaForCausalLM of the same
sizes in f32, its KV cache; in the llama.cpp columns of its own rows), and
prints a markdown table with the weights' bytes read per decoded token
(every matrix and the tied head: the GGUF's tensor data) and the GB/s that
makes. With --bandwidth, bench/models/helper.c's `bandwidth` mode (1 GiB
read by vector loads, built here with cc -O3 -march=native) measures the
memory read bandwidth on the row's thread count right before each decode
measurement, and the table gains tfm's GB/s as a share of it: the issue's
"decode at >= 85% of the bytes-per-token / bandwidth bound". llama.cpp runs either as its own `llama-bench` (--llama-bench PATH:
tg of --runs tokens at depth --position, pp of --prefill tokens, per-token
minimum over llama-bench's repetitions) or through llama-cpp-python (--python:
VENV's python must have it; pip install llama-cpp-python builds llama.cpp
from source, ~10 minutes). llama-bench from the same source tree:
    pip download --no-deps --no-binary :all: llama-cpp-python -d DIR
    (untar; in vendor/llama.cpp) cmake -B build -G Ninja -DGGML_NATIVE=ON \
        -DLLAMA_CURL=OFF -DBUILD_SHARED_LIBS=OFF && ninja -C build llama-bench
The benchmark, never the tests, uses it.
"""
import json
import argparse
import os
import re
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

LLAMA_CPP = r"""
import sys, time, llama_cpp
path, threads, position, prefill, runs = sys.argv[1], *map(int, sys.argv[2:6])
llm = llama_cpp.Llama(model_path=path, n_ctx=2048, n_threads=threads,
                      n_threads_batch=threads, n_batch=512, verbose=False)
prompt = [300 + i % 1000 for i in range(prefill)]
best = None
for _ in range(3):
    llm.reset()
    t = time.perf_counter(); llm.eval(prompt); t = time.perf_counter() - t
    best = t if best is None else min(best, t)
llm.reset()
llm.eval([300 + i % 1000 for i in range(position)])
times = []
for i in range(runs):
    t = time.perf_counter(); llm.eval([400 + i]); times.append(time.perf_counter() - t)
times.sort()
print(f"{times[0] * 1e3:.3f} {times[len(times) // 2] * 1e3:.3f} {best * 1e3:.3f}")
"""


TORCH = r"""
import sys, time, torch, transformers
(layers, hidden, heads, kv_heads, ffn, vocab, threads, position, prefill,
 runs) = map(int, sys.argv[1:11])
torch.set_num_threads(threads)
torch.manual_seed(0)
config = transformers.LlamaConfig(
    vocab_size=vocab, hidden_size=hidden, intermediate_size=ffn,
    num_hidden_layers=layers, num_attention_heads=heads,
    num_key_value_heads=kv_heads, tie_word_embeddings=True,
    rope_theta=100000.0, max_position_embeddings=position + prefill + runs + 8)
model = transformers.LlamaForCausalLM(config).eval()
with torch.inference_mode():
    prompt = ((torch.arange(prefill) % 1000 + 300) % vocab)[None]
    best = None
    for _ in range(3):
        t = time.perf_counter(); model(prompt, use_cache=True)
        t = time.perf_counter() - t
        best = t if best is None else min(best, t)
    out = model(((torch.arange(position) % 1000 + 300) % vocab)[None],
                use_cache=True)
    cache, times = out.past_key_values, []
    for i in range(runs):
        t = time.perf_counter()
        out = model(torch.tensor([[(400 + i) % vocab]]), past_key_values=cache,
                    use_cache=True)
        times.append(time.perf_counter() - t)
        cache = out.past_key_values
times.sort()
print(f"{times[0] * 1e3:.3f} {times[len(times) // 2] * 1e3:.3f} {best * 1e3:.3f}")
"""


def size_value(size_args, name, default):
    """make_gguf_q8.py's --NAME among the pass-through arguments."""
    for i, arg in enumerate(size_args):
        if arg == f"--{name}" and i + 1 < len(size_args):
            return int(size_args[i + 1])
        if arg.startswith(f"--{name}="):
            return int(arg.split("=", 1)[1])
    return default


def write_npy_i64(path, shape, values):
    header = "{'descr': '<i8', 'fortran_order': False, 'shape': (%s), }" % (
        "".join(f"{d}, " for d in shape))
    header += " " * (-(len(header) + 11) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode())
        f.write(struct.pack(f"<{len(values)}q", *values))


def tfm_bench(tfm_bin, so, inputs, threads, runs):
    cmd = [os.path.join(tfm_bin, "tfm-run"), so, "--quiet", "--threads",
           str(threads), "--bench", str(runs)]
    for name, path in inputs.items():
        cmd += ["--input", f"{name}={path}"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    m = re.search(r"min ([0-9.]+) ms, median ([0-9.]+) ms", out)
    return float(m.group(1)), float(m.group(2))


def llama_bench(binary, gguf, threads, position, prefill, runs):
    """min and median ms per decoded token at depth `position`, and the min
    ms of a `prefill`-token prompt, from llama.cpp's own llama-bench."""
    def run(*args):
        # --repack 0: llama.cpp 0c1e570's AMX repacked matmul dies with a
        # general protection fault in ggml_backend_amx_mul_mat on a
        # Sapphire Rapids VM (any batch > 1); its AVX-512/VNNI kernels run.
        out = subprocess.run([binary, "-m", gguf, "-t", str(threads), "-o",
                              "json", "-r", "5", "--repack", "0", *args],
                             capture_output=True, text=True)
        if out.returncode != 0:
            raise RuntimeError(out.stderr[-500:])
        return json.loads(out.stdout)[0]
    tg = run("-p", "0", "-n", str(runs), "-d", str(position))
    per_token = sorted(ns / 1e6 / runs for ns in tg["samples_ns"])
    pp = run("-p", str(prefill), "-n", "0")
    return [per_token[0], per_token[len(per_token) // 2],
            min(pp["samples_ns"]) / 1e6]


def main():
    p = argparse.ArgumentParser()
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--python")
    who.add_argument("--llama-bench")
    p.add_argument("--types", default="Q8_0,Q4_0")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--position", type=int, default=64)
    p.add_argument("--prefill", type=int, default=32)
    p.add_argument("--runs", type=int, default=30)
    p.add_argument("--tfm-bin", default=os.path.join(ROOT, "build", "bin"))
    p.add_argument("--work", default="/tmp/tfm-vs-llama-cpp")
    p.add_argument("--bandwidth", action="store_true",
                   help="measure the memory read bandwidth beside each "
                        "decode row (bench/models/helper.c bandwidth)")
    p.add_argument("--torch", metavar="PYTHON",
                   help="also PyTorch eager (f32, transformers' "
                        "LlamaForCausalLM of the same sizes, random weights) "
                        "with this interpreter")
    a, size_args = p.parse_known_args()
    # The caches hold the decode position (plus its runs) or the prefill,
    # whichever is longer: llama.tfm's tfm.capacity.
    need = max(a.position + a.runs + 1, a.prefill)
    capacity = max(1024, -(-need // 256) * 256)
    rows = []
    helper = None
    if a.bandwidth:
        os.makedirs(a.work, exist_ok=True)
        helper = os.path.join(a.work, "helper")
        subprocess.run(["cc", "-O3", "-march=native", "-pthread", "-o", helper,
                        os.path.join(ROOT, "bench", "models", "helper.c")],
                       check=True)
    for kind in a.types.split(","):
        work = os.path.join(a.work, kind)
        subprocess.run([sys.executable, os.path.join(HERE, "make_gguf_q8.py"),
                        work, "--type", kind, "--llama-cpp", "--position",
                        str(a.position), "--capacity", str(capacity)] +
                       size_args, check=True,
                       stdout=subprocess.DEVNULL)
        gguf = os.path.join(work, "model.gguf")
        so = os.path.join(work, "tfm.so")
        subprocess.run([os.path.join(a.tfm_bin, "tfm-compile"),
                        os.path.join(ROOT, "examples", "llama", "llama.tfm"),
                        "--weights", gguf, "--set",
                        f"tfm.capacity={capacity}",
                        # Only the last position's logits, as llama-bench's
                        # prompt computes (and generation reads).
                        "--set", "tfm.last_logits=true", "-o", so],
                       check=True)
        ids = os.path.join(work, f"prompt_{a.prefill}.npy")
        zero = os.path.join(work, "zero.npy")
        write_npy_i64(ids, (1, a.prefill), [300 + i for i in range(a.prefill)])
        write_npy_i64(zero, (1,), [0])
        cache = os.path.join(work, "cache.npy")
        weight_bytes = os.path.getsize(gguf)
        for threads in map(int, a.threads.split(",")):
            bandwidth = None
            if helper:
                out = subprocess.run([helper, "bandwidth", "1024", "3",
                                      str(threads)], check=True,
                                     capture_output=True, text=True)
                measured = json.loads(out.stdout)
                bandwidth = measured["single" if threads == 1 else "all"]
            decode = tfm_bench(a.tfm_bin, so, {
                "input_ids": os.path.join(work, "input_ids.npy"),
                "past": os.path.join(work, "past.npy"),
                "k_cache": cache, "v_cache": cache}, threads, a.runs)
            prefill = tfm_bench(a.tfm_bin, so, {
                "input_ids": ids, "past": zero, "k_cache": cache,
                "v_cache": cache}, threads, max(3, a.runs // 10))
            ref = None
            if a.llama_bench:
                try:
                    ref = llama_bench(a.llama_bench, gguf, threads, a.position,
                                      a.prefill, a.runs)
                except (RuntimeError, ValueError, KeyError, IndexError) as e:
                    print(f"llama-bench failed: {e}", file=sys.stderr)
            else:
                out = subprocess.run(
                    [a.python, "-c", LLAMA_CPP, gguf, str(threads),
                     str(a.position), str(a.prefill), str(a.runs)],
                    capture_output=True, text=True)
                if out.returncode != 0:
                    print(f"llama.cpp failed: {out.stderr[-500:]}",
                          file=sys.stderr)
                else:
                    ref = [float(x) for x in out.stdout.split()[-3:]]
            rows.append((kind, threads, weight_bytes, decode, prefill, ref,
                         bandwidth))
            print(rows[-1], file=sys.stderr)
    torch_rows = []
    if a.torch:
        sizes = [size_value(size_args, n, d) for n, d in (
            ("layers", 30), ("hidden", 576), ("heads", 9), ("kv-heads", 3),
            ("ffn", 1536), ("vocab", 49152))]
        for threads in map(int, a.threads.split(",")):
            out = subprocess.run(
                [a.torch, "-c", TORCH] + [str(v) for v in sizes] +
                [str(threads), str(a.position), str(a.prefill), str(a.runs)],
                capture_output=True, text=True)
            if out.returncode != 0:
                print(f"PyTorch failed: {out.stderr[-500:]}", file=sys.stderr)
                continue
            torch_rows.append((threads, [float(x) for x in
                                         out.stdout.split()[-3:]]))
            print(torch_rows[-1], file=sys.stderr)
    bound = " memory GB/s | tfm % of bound |" if helper else ""
    print(f"| type | thr | weights MB | tfm decode ms (min / median) | "
          f"llama.cpp decode ms | tfm GB/s | llama.cpp GB/s | tfm prefill "
          f"{a.prefill} ms | llama.cpp prefill ms |{bound}")
    print("|---|--:|--:|--:|--:|--:|--:|--:|--:|" + ("--:|--:|" if helper
                                                   else ""))
    for kind, threads, size, decode, prefill, ref, bandwidth in rows:
        gbs = lambda ms: f"{size / ms / 1e6:.1f}"
        llama = (f"{ref[0]:.2f} / {ref[1]:.2f}", gbs(ref[0]), f"{ref[2]:.1f}") \
            if ref else ("error", "-", "error")
        share = (f" {bandwidth:.1f} | "
                 f"{100 * size / decode[0] / 1e6 / bandwidth:.0f}% |"
                 if bandwidth else "")
        print(f"| {kind} | {threads} | {size / 1e6:.0f} | {decode[0]:.2f} / "
              f"{decode[1]:.2f} | {llama[0]} | {gbs(decode[0])} | {llama[1]} | "
              f"{prefill[0]:.1f} | {llama[2]} |{share}")
    for threads, (best, median, prefill) in torch_rows:
        print(f"| PyTorch eager f32 | {threads} | - | - | {best:.2f} / "
              f"{median:.2f} | - | - | - | {prefill:.1f} |" +
              (" - | - |" if helper else ""))


if __name__ == "__main__":
    main()
