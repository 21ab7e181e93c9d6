"""Timing: the repetition rule, the output check, and running measurements.

Rule (the same for every runtime): one warm-up call, then timed calls until
at least `min_runs` calls and `budget` seconds (at most MAX_RUNS calls);
min_runs is 3, or 2 when the warm-up took over 1 s, or 1 over 5 s (so the
slow rows of today's tfm do not take an hour). The table reports the median.
"""

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

MAX_RUNS = 1000
HERE = os.path.dirname(os.path.abspath(__file__))


def min_runs_for(warmup_s):
    return 1 if warmup_s > 5 else 2 if warmup_s > 1 else 3


def time_calls(call, budget):
    """Times `call()`; returns {"ms": median, "min_ms", "runs", "warmup_ms"}."""
    t0 = time.perf_counter()
    call()
    warm = time.perf_counter() - t0
    need = min_runs_for(warm)
    times = []
    start = time.perf_counter()
    while len(times) < MAX_RUNS and (len(times) < need or time.perf_counter() - start < budget):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return {"ms": statistics.median(times) * 1e3, "min_ms": min(times) * 1e3,
            "runs": len(times), "warmup_ms": warm * 1e3}


def rel_err(out, ref):
    """max |out - ref| / max |ref| (inf when the shapes differ or out has NaN)."""
    out = np.asarray(out, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if out.shape != ref.shape:
        out = out.reshape(-1) if out.size == ref.size else None
        if out is None:
            return float("inf")
        ref = ref.reshape(-1)
    if not np.all(np.isfinite(out)):
        return float("inf")
    return float(np.max(np.abs(out - ref)) / max(np.max(np.abs(ref)), 1e-30))


def accuracy(out, ref):
    """Every runtime's output against PyTorch fp32 eager's, flattened:
    {"err": rel_err, "abs_err": max |out - ref|, "cos": cosine similarity}."""
    res = {"err": rel_err(out, ref), "abs_err": float("inf"), "cos": None}
    o = np.asarray(out, dtype=np.float64).reshape(-1)
    r = np.asarray(ref, dtype=np.float64).reshape(-1)
    if o.size == r.size and np.all(np.isfinite(o)):
        res["abs_err"] = float(np.max(np.abs(o - r)))
        res["cos"] = float(np.dot(o, r) / max(np.linalg.norm(o) * np.linalg.norm(r), 1e-300))
    return res


def cpu_busy_s():
    """CPU seconds all processes have used since boot (/proc/stat)."""
    with open("/proc/stat") as f:
        vals = [int(v) for v in f.readline().split()[1:9]]
    return (sum(vals) - vals[3] - vals[4]) / os.sysconf("SC_CLK_TCK")


class Busy:
    """How many cores *other* processes kept busy while a measurement ran:
    (all CPU time used meanwhile - the measured process's) / wall time."""

    def __init__(self):
        self.t0, self.c0 = time.perf_counter(), cpu_busy_s()

    def cores(self, own_cpu_s):
        wall = time.perf_counter() - self.t0
        if own_cpu_s is None or wall < 0.1:
            return None
        return max(0.0, (cpu_busy_s() - self.c0 - own_cpu_s) / wall)


class PeerServer:
    """A `peers.py serve LIBRARY` process; measure() runs one forked child."""

    def __init__(self, python, library, log):
        self.library = library
        self.log = log
        self.proc = None
        self.error = None
        try:
            self.proc = subprocess.Popen(
                [python, os.path.join(HERE, "peers.py"), "serve", library],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True, cwd=HERE)
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"cannot import {library} (see the log)")
        except Exception as e:  # noqa: BLE001
            self.error = f"{library}: {e}"
            self.proc = None

    def measure(self, peer, d, threads, budget, timeout):
        if self.proc is None:
            return {"status": "error", "error": self.error or "server not running"}
        fd, result = tempfile.mkstemp(suffix=".json", prefix="tfm-bench-")
        os.close(fd)
        try:
            req = {"peer": peer, "dir": d, "threads": threads, "budget": budget,
                   "timeout": timeout, "result": result}
            busy = Busy()
            self.proc.stdin.write(json.dumps(req) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
            if not line:
                self.proc = None
                self.error = f"{self.library} server died"
                return {"status": "error", "error": self.error}
            reply = json.loads(line)
            if reply["status"] == "timeout":
                return {"status": "timeout", "error": f"timeout after {timeout:.0f} s"}
            try:
                with open(result) as f:
                    res = json.load(f)
            except (OSError, ValueError):
                return {"status": "error", "error": f"child crashed (exit {reply['exit']})"}
            res["busy"] = busy.cores(reply.get("cpu_s"))
            return res
        finally:
            os.remove(result)

    def close(self):
        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)


_BENCH = re.compile(r"bench: (\d+) runs? on \d+ threads?, min ([0-9.]+) ms, median ([0-9.]+) ms")
_RSS = re.compile(r"helper-rss: maxrss_kib=(\d+) status=(-?\d+) cpu_s=([0-9.]+)")


def _workload(d):
    with open(os.path.join(d, "export.json")) as f:
        return json.load(f)["key"]["workload"]


def _tfm_run_once(helper, tfm_bin, d, threads, runs, out_npy, timeout, log, so="model.so"):
    import workloads
    w = _workload(d)
    cmd = [helper, "rss", os.path.join(tfm_bin, "tfm-run"), os.path.join(d, so)]
    for name in workloads.input_shapes(w):
        cmd += ["--input", f"{name}=" + os.path.join(d, f"{name}.npy")]
    cmd += ["--threads", str(threads), "--bench", str(runs), "--quiet"]
    if out_npy:
        cmd += ["--output", f"{workloads.output_name(w)}=" + out_npy]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"timeout after {timeout:.0f} s"
    text = p.stdout + p.stderr
    log.write(f"$ {' '.join(cmd)}\n{text}\n")
    b, m = _BENCH.search(text), _RSS.search(text)
    if p.returncode != 0 or not b:
        last = [ln for ln in text.splitlines() if "error" in ln.lower()]
        return None, (last[0] if last else f"tfm-run exit {p.returncode}")[:200]
    return {"runs": int(b.group(1)), "min_ms": float(b.group(2)), "ms": float(b.group(3)),
            "peak_mib": int(m.group(1)) / 1024 if m else None,
            "cpu_s": float(m.group(3)) if m else None}, None


def measure_tfm(helper, tfm_bin, d, threads, budget, timeout, log, so="model.so"):
    """tfm-run in a fresh process (via `helper rss`): one run checked against
    ref.npy plus one timed run; then, unless that took over 5 s, a second
    process with enough runs for the budget (the same rule as time_calls)."""
    out_npy = os.path.join(d, f"tfm_out_t{threads}.npy")
    busy = Busy()
    first, err = _tfm_run_once(helper, tfm_bin, d, threads, 1, out_npy, timeout, log, so)
    if first is None:
        return {"status": "error", "error": err}
    res = {"status": "ok"}
    res.update(accuracy(np.load(out_npy), np.load(os.path.join(d, "ref.npy"))))
    os.remove(out_npy)
    t = first["ms"] / 1e3
    need = min_runs_for(t)
    if need == 1:
        res.update(first)
        res["busy"] = busy.cores(first["cpu_s"])
        return res
    runs = int(min(MAX_RUNS, max(need, budget / max(t, 1e-6))))
    second, err = _tfm_run_once(helper, tfm_bin, d, threads, runs, None, timeout, log, so)
    if second is None:
        res.update(first)
        res["note"] = f"second run failed: {err}"
        return res
    res.update(second)
    if first["cpu_s"] is not None and second["cpu_s"] is not None:
        res["busy"] = busy.cores(first["cpu_s"] + second["cpu_s"])
    res["peak_mib"] = max(first["peak_mib"] or 0, second["peak_mib"] or 0)
    return res


# tfm-compile's options for each low-precision row (--dtypes), and the .so each writes
DTYPE_FLAGS = {"f32": [], "bf16": ["--dtype=bf16"], "int8": ["--quantize=int8"]}


def tfm_so(dtype):
    return "model.so" if dtype == "f32" else f"model.{dtype}.so"


def compile_tfm(tfm_bin, d, timeout, log, cpu="portable", dtype="f32", extra=()):
    """tfm-compile model.tfm --weights W --cpu CPU [DTYPE_FLAGS[dtype]] [extra]
    -o model[.DTYPE].so; returns (seconds, error). A low-precision compile
    that tfm-compile refuses because of its flags (an unknown option, or
    --dtype bf16 on the CPU before it exists) returns the error
    "not supported by this build: <tfm-compile's first line>"."""
    import workloads
    so = os.path.join(d, tfm_so(dtype))
    if os.path.exists(so):
        os.remove(so)
    exe = os.path.join(tfm_bin, "tfm-compile")
    for attempt in range(3):  # the binary may be relinked by a concurrent build
        if os.path.exists(exe):
            break
        log.write(f"{exe} missing, waiting\n")
        time.sleep(30)
    flags = DTYPE_FLAGS[dtype] + list(extra)
    cmd = [exe, os.path.join(d, "model.tfm"), "--weights",
           os.path.join(d, workloads.weights_file(_workload(d))), "--cpu", cpu, *flags, "-o", so]
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"tfm-compile timeout after {timeout:.0f} s"
    except OSError as e:
        return None, f"tfm-compile: {e}"
    dt = time.perf_counter() - t0
    log.write(f"$ {' '.join(cmd)}\n{p.stdout}{p.stderr}\n")
    if p.returncode != 0 or not os.path.exists(so):
        lines = p.stderr.strip().splitlines() or [f"exit {p.returncode}"]
        first = lines[0].strip()
        names = [f.split("=")[0].lstrip("-") for f in flags]
        if flags and ("Unknown command line argument" in p.stderr or (
                any(n in first for n in names)
                and re.search(r"needs|not supported|unsupported|only", first))):
            if not first.startswith("tfm-compile"):
                first = "tfm-compile: " + first
            return None, ("not supported by this build: " + first)[:300]
        return None, ("tfm-compile: " + lines[-1])[:200]
    return dt, None


if __name__ == "__main__":
    print(min_runs_for(float(sys.argv[1])) if len(sys.argv) > 1 else MAX_RUNS)
