#!/usr/bin/env python3
"""Runs the GPU kit (make_kit.py built it; run.sh calls this): every case,
then compute-sanitizer, then the benchmarks beside PyTorch, then ncu
counters, within a time budget; never stops at a failure.

usage: run_kit.py --kit DIR --out DIR [--budget SECONDS] [--only REGEX]
                  [--jobs N] [--runs N] [--phases cases,sanitize,bench,ncu]

Writes to --out: summary.json (every case: pass, fail, error or skipped,
with its message, largest errors and time), summary.md (the same as
tables, also printed last), and the logs of what failed (cases.log,
sanitize.log, bench.log, ncu.txt). Without a usable GPU (tfm-run
--gpu-info fails: no CUDA driver, no device) everything is reported as
skipped with the reason, and the exit status is 0. The exit status is 1
when a case failed or errored, 0 otherwise.
"""

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import kit_data  # noqa: E402

STEP_TIMEOUT_S = 180
ERROR_LINE = re.compile(
    r"^(\S+): max abs err (\S+), max rel err (\S+) \(rtol \S+, atol \S+\): "
    r"(ok|MISMATCH)$", re.M)
BENCH_LINE = re.compile(r"device time min ([0-9.]+) ms, median ([0-9.]+) ms")


class Clock:
    def __init__(self, budget):
        self.start = time.monotonic()
        self.budget = budget

    def elapsed(self):
        return time.monotonic() - self.start

    def left(self):
        return self.budget - self.elapsed()


def tail(text, lines=12, chars=1500):
    text = "\n".join(text.strip().splitlines()[-lines:])
    return text[-chars:]


class Runner:
    def __init__(self, args):
        self.kit = os.path.abspath(args.kit)
        self.out = os.path.abspath(args.out)
        self.work = os.path.join(self.out, "work")
        os.makedirs(self.work, exist_ok=True)
        with open(os.path.join(self.kit, "manifest.json")) as f:
            self.manifest = json.load(f)
        self.tfm_run = os.path.join(self.kit, "bin", "tfm-run")
        self.clock = Clock(args.budget)
        self.args = args
        self.logs = {name: open(os.path.join(self.out, name), "w")
                     for name in ("cases.log", "sanitize.log", "bench.log")}
        self.bench_inputs = {}
        self.summary = {"kit_commit": self.manifest.get("commit"),
                        "kit_built": self.manifest.get("built"),
                        "budget_s": args.budget, "notes": []}

    def note(self, text):
        print(text, file=sys.stderr, flush=True)
        self.summary["notes"].append(text)

    def path(self, kit_path):
        return os.path.join(self.kit, kit_path)

    # -- the device -------------------------------------------------------

    def probe(self):
        """None when a GPU is usable, else why not."""
        try:
            info = subprocess.run([self.tfm_run, "--gpu-info"],
                                  capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as e:
            return f"tfm-run --gpu-info did not run: {e}"
        if info.returncode != 0:
            return (f"no usable GPU: {tail(info.stderr + info.stdout, 3)}"
                    f" (tfm-run --gpu-info exit {info.returncode})")
        self.summary["device"] = info.stdout.strip()
        smi = shutil.which("nvidia-smi")
        if smi:
            q = subprocess.run(
                [smi, "--query-gpu=name,driver_version,memory.total,"
                 "clocks.max.sm,clocks.max.mem,power.limit",
                 "--format=csv,noheader"], capture_output=True, text=True)
            self.summary["nvidia_smi"] = q.stdout.strip()
        return None

    # -- correctness ------------------------------------------------------

    def run_case(self, case):
        """Runs a case's steps; returns the case's result dict."""
        result = {"group": case["group"], "name": case["name"],
                  "dtype": case["dtype"], "arch": case["arch"]}
        if "compile_error" in case:
            result.update(status="error", message="tfm-compile failed: "
                          + tail(case["compile_error"], 3))
            return result
        case_dir = os.path.join(
            self.work, case["group"], case["name"].replace("/", "_"))
        os.makedirs(case_dir, exist_ok=True)
        start = time.monotonic()
        errors = {}
        for n, step in enumerate(case["steps"]):
            command = self.step_command(case, step, case_dir)
            try:
                run = subprocess.run(command, capture_output=True, text=True,
                                     timeout=STEP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                result.update(status="error", message=f"step {n}: timed out "
                              f"after {STEP_TIMEOUT_S} s")
                return result
            for name, abs_err, rel_err, verdict in ERROR_LINE.findall(
                    run.stdout):
                key = name if len(case["steps"]) == 1 else f"{name}[{n}]"
                errors[key] = {"max_abs": float(abs_err),
                               "max_rel": float(rel_err),
                               "ok": verdict == "ok"}
            if run.returncode != 0:
                kind = "fail" if run.returncode == 1 else "error"
                why = (f"exit {run.returncode}" if run.returncode >= 0 else
                       f"killed by signal {-run.returncode}")
                result.update(status=kind, message=f"step {n}: {why}: "
                              + tail(run.stdout + run.stderr, 6))
                self.log("cases.log", case, command, run)
                break
        else:
            result["status"] = "pass"
        result["errors"] = errors
        result["rtol"] = case["steps"][0]["rtol"]
        result["atol"] = case["steps"][0]["atol"]
        result["seconds"] = round(time.monotonic() - start, 2)
        return result

    def step_command(self, case, step, case_dir, bench=None):
        command = [self.tfm_run, self.path(case["artifact"]), "--quiet"]
        for name, path in step["inputs"].items():
            path = (os.path.join(case_dir, path[1:] + ".npy")
                    if path.startswith("@") else self.path(path))
            command += ["--input", f"{name}={path}"]
        for name, path in step["outputs"].items():
            command += ["--output",
                        f"{name}={os.path.join(case_dir, path[1:] + '.npy')}"]
        for name, path in step["expected"].items():
            command += ["--expected", f"{name}={self.path(path)}"]
        if step["expected"]:
            command += ["--rtol", repr(step["rtol"]),
                        "--atol", repr(step["atol"])]
            if step.get("atol_scaled"):
                command.append("--atol-scaled")
        return command

    def log(self, name, case, command, run):
        f = self.logs[name]
        f.write(f"=== {case['group']} {case['name']}\n$ {' '.join(command)}\n"
                f"exit {run.returncode}\n{run.stdout}{run.stderr}\n")
        f.flush()

    def cases(self, deadline):
        cases = self.selected(self.manifest["cases"])
        results = [None] * len(cases)

        def one(index):
            if self.clock.elapsed() > deadline:
                return index, skipped(cases[index], "out of time (the "
                                      "cases' share of the budget was spent)")
            return index, self.run_case(cases[index])

        with concurrent.futures.ThreadPoolExecutor(self.args.jobs) as pool:
            for done, (index, result) in enumerate(
                    pool.map(one, range(len(cases))), 1):
                results[index] = result
                if result["status"] in ("fail", "error"):
                    print(f"{result['status'].upper()} {result['group']} "
                          f"{result['name']}: {result['message'][:300]}",
                          file=sys.stderr, flush=True)
                if done % 100 == 0:
                    print(f"... {done}/{len(cases)} cases, "
                          f"{self.clock.elapsed():.0f} s",
                          file=sys.stderr, flush=True)
        return results

    def selected(self, items):
        if not self.args.only:
            return items
        pattern = re.compile(self.args.only)
        return [c for c in items
                if pattern.search(f"{c.get('group', 'bench')}/{c['name']}")]

    # -- compute-sanitizer -------------------------------------------------

    def sanitize(self, deadline):
        tool = find_tool("compute-sanitizer")
        runs = []
        cases = [c for c in self.selected(self.manifest["cases"])
                 if c.get("sanitize") and "compile_error" not in c]
        for case in cases:
            runs.append((case, "memcheck"))
            if case["group"].startswith(("attention", "gemm")) or \
                    case["name"].startswith(("encoder", "hf/bert")):
                runs.append((case, "racecheck"))  # shared-memory kernels
        if not tool:
            return [dict(name=c["name"], group=c["group"], dtype=c["dtype"],
                         tool=t, status="skipped",
                         message="compute-sanitizer not found")
                    for c, t in runs]

        def one(item):
            case, check = item
            result = {"name": case["name"], "group": case["group"],
                      "dtype": case["dtype"], "tool": check}
            if self.clock.elapsed() > deadline:
                result.update(status="skipped", message="out of time")
                return result
            case_dir = os.path.join(self.work, "sanitize", check,
                                    case["group"],
                                    case["name"].replace("/", "_"))
            os.makedirs(case_dir, exist_ok=True)
            start = time.monotonic()
            # A chain's first two steps: the prefill and one decode step.
            for n, step in enumerate(case["steps"][:2]):
                command = [tool, "--tool", check, "--error-exitcode", "86",
                           "--print-limit", "20"] + self.step_command(
                               case, step, case_dir)
                try:
                    run = subprocess.run(command, capture_output=True,
                                         text=True, timeout=240)
                except subprocess.TimeoutExpired:
                    result.update(status="error", message="timed out")
                    return result
                summary = re.findall(r"(?:ERROR|RACECHECK) SUMMARY: .*",
                                     run.stdout + run.stderr)
                result["report"] = summary[-1] if summary else ""
                if run.returncode != 0:
                    result.update(
                        status="fail" if run.returncode == 86 else "error",
                        message=f"step {n}: exit {run.returncode}: "
                        + tail(run.stdout + run.stderr, 8))
                    self.log("sanitize.log", case, command, run)
                    break
            else:
                result["status"] = "pass"
            result["seconds"] = round(time.monotonic() - start, 1)
            return result

        with concurrent.futures.ThreadPoolExecutor(
                max(1, self.args.jobs // 2)) as pool:
            return list(pool.map(one, runs))

    # -- benchmarks --------------------------------------------------------

    def bench(self, deadline):
        try:
            import torch
            torch_ok = torch.cuda.is_available()
            torch_version = torch.__version__
        except ImportError:
            torch, torch_ok, torch_version = None, False, None
        self.summary["torch"] = torch_version if torch_ok else None
        rows = []
        for item in self.selected(self.manifest["bench"]):
            if self.clock.elapsed() > deadline:
                rows.append({"name": item["name"], "status": "skipped",
                             "message": "out of time"})
                continue
            try:
                rows += getattr(self, "bench_" + item["kind"])(
                    item, torch if torch_ok else None)
            except Exception as e:  # noqa: BLE001 -- reported, never fatal
                rows.append({"name": item["name"], "status": "error",
                             "message": f"{type(e).__name__}: {e}"[:600]})
                self.logs["bench.log"].write(f"{item['name']}: {e!r}\n")
        return rows

    def tfm_bench(self, artifact, inputs, output, flops):
        command = [self.tfm_run, self.path(artifact), "--quiet", "--bench",
                   str(self.args.runs), "--flops", str(flops), "--output",
                   f"y={output}"]
        for name, path in inputs.items():
            command += ["--input", f"{name}={path}"]
        run = subprocess.run(command, capture_output=True, text=True,
                             timeout=STEP_TIMEOUT_S)
        self.logs["bench.log"].write(f"$ {' '.join(command)}\nexit "
                                     f"{run.returncode}\n{run.stdout}"
                                     f"{run.stderr}\n")
        self.logs["bench.log"].flush()
        m = BENCH_LINE.search(run.stdout)
        if run.returncode != 0 or not m:
            raise RuntimeError(f"tfm-run exit {run.returncode}: "
                               + tail(run.stdout + run.stderr, 4))
        return float(m.group(1)), float(m.group(2))

    def torch_time(self, torch, fn):
        fn()
        torch.cuda.synchronize()
        for _ in range(2):
            fn()
        times = []
        for _ in range(self.args.runs):
            start = torch.cuda.Event(enable_timing=True)
            stop = torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop))
        times.sort()
        return times[0], times[len(times) // 2]

    def compare(self, rows, item, label, flops, inputs, reference, torch,
                torch_fns):
        """tfm's rows for each dtype, and PyTorch's beside them, with the
        largest error of each against the float64 reference."""
        import numpy as np
        ref = reference()
        scale = float(ref.abs().max()) if torch else None
        for dtype, artifact in item["artifacts"].items():
            row = {"name": item["name"], "label": label, "dtype": dtype,
                   "flops": flops}
            output = os.path.join(self.work, f"{item['name']}_{dtype}_y.npy")
            try:
                row["tfm_ms"], row["tfm_median_ms"] = self.tfm_bench(
                    artifact, inputs, output, flops)
                row["status"] = "ok"
                if torch is not None:
                    got = torch.from_numpy(np.load(output)).cuda().double()
                    row["tfm_error"] = float((got - ref).abs().max()) / scale
            except Exception as e:  # noqa: BLE001
                row.update(status="error", message=str(e)[:600])
            fn = torch_fns.get(dtype) if torch_fns else None
            if fn is not None:
                got = fn()
                row["torch_error"] = float(
                    (got.double() - ref).abs().max()) / scale
                row["torch_ms"], row["torch_median_ms"] = self.torch_time(
                    torch, fn)
            rows.append(row)
        for dtype, error in item.get("compile_errors", {}).items():
            rows.append({"name": item["name"], "label": label, "dtype": dtype,
                         "status": "error",
                         "message": "tfm-compile failed: " + tail(error, 2)})

    def save_inputs(self, name, arrays):
        import numpy as np
        paths = {}
        for key, value in arrays.items():
            paths[key] = os.path.join(self.work, f"{name}_{key}.npy")
            np.save(paths[key], value)
        self.bench_inputs[name] = paths
        return paths

    def bench_attention(self, item, torch):
        B, H, S, D, causal = (item[k] for k in ("B", "H", "S", "D", "causal"))
        arrays = bench_arrays(item)
        inputs = self.save_inputs(item["name"], arrays)
        label = f"attention {B},{H},{S},{D}" + (" causal" if causal else "")
        rows = []
        if torch is None:
            self.compare(rows, item, label, item["flops"], inputs,
                         lambda: None, None, None)
            return rows
        sdpa = torch.nn.functional.scaled_dot_product_attention
        q, k, v = (torch.from_numpy(arrays[n]).cuda() for n in "qkv")
        half = [t.to(torch.bfloat16) for t in (q, k, v)]
        fns = {"f32": lambda: sdpa(q, k, v, is_causal=causal),
               "bf16": lambda: sdpa(*half, is_causal=causal)}
        self.compare(rows, item, label, item["flops"], inputs,
                     lambda: sdpa(q.double(), k.double(), v.double(),
                                  is_causal=causal), torch, fns)
        return rows

    def bench_gemm(self, item, torch):
        M, N, K = item["M"], item["N"], item["K"]
        arrays = bench_arrays(item)
        inputs = self.save_inputs(item["name"], arrays)
        label = f"gemm {M}x{K} @ {K}x{N}"
        rows = []
        if torch is None:
            self.compare(rows, item, label, item["flops"], inputs,
                         lambda: None, None, None)
            return rows
        a, b = (torch.from_numpy(arrays[n]).cuda() for n in "ab")
        a16, b16 = a.half(), b.half()
        ab16, bb16 = a.to(torch.bfloat16), b.to(torch.bfloat16)
        fns = {"f32": lambda: a @ b, "f16": lambda: a16 @ b16,
               "bf16": lambda: ab16 @ bb16}
        self.compare(rows, item, label, item["flops"], inputs,
                     lambda: a.double() @ b.double(), torch, fns)
        return rows

    def bench_encoder(self, item, torch):
        rows = []
        module = module64 = module16 = None
        if torch is not None:
            E, H, F = item["E"], item["H"], item["F"]
            module = torch.nn.TransformerEncoderLayer(
                E, H, F, dropout=0.0, activation="relu", batch_first=True)
            module.load_state_dict({k: torch.from_numpy(v) for k, v in
                                    kit_data.encoder_weights().items()})
            module = module.cuda().eval()
            module64 = torch.nn.TransformerEncoderLayer(
                E, H, F, dropout=0.0, activation="relu", batch_first=True)
            module64.load_state_dict(module.state_dict())
            module64 = module64.double().cuda().eval()
            module16 = torch.nn.TransformerEncoderLayer(
                E, H, F, dropout=0.0, activation="relu", batch_first=True)
            module16.load_state_dict(module.state_dict())
            module16 = module16.to(torch.bfloat16).cuda().eval()
        for S in item["seqs"]:
            x = kit_data.normal((1, S, item["E"]), S)
            inputs = self.save_inputs(f"{item['name']}_s{S}", {"x": x})
            sub = dict(item, name=f"{item['name']}_s{S}")
            label = (f"encoder layer E={item['E']} H={item['H']} "
                     f"F={item['F']} S={S}")
            if torch is None:
                self.compare(rows, sub, label, item["flops"][str(S)], inputs,
                             lambda: None, None, None)
                continue
            xt = torch.from_numpy(x).cuda()
            x16 = xt.to(torch.bfloat16)

            def fp32():
                with torch.inference_mode():
                    return module(xt)

            def bf16():
                with torch.inference_mode():
                    return module16(x16)

            def reference():
                with torch.inference_mode():
                    return module64(xt.double())
            self.compare(rows, sub, label, item["flops"][str(S)], inputs,
                         reference, torch, {"f32": fp32, "bf16": bf16})
        return rows

    # -- ncu ----------------------------------------------------------------

    def ncu(self, deadline):
        tool = find_tool("ncu")
        if not tool:
            return "ncu not found"
        bench = {b["name"]: b for b in self.manifest["bench"]}
        picks = [("attn_b1_h8_s2048_d64", "bf16"), ("gemm_4096_4096_4096", "bf16"),
                 ("attn_b1_h8_s2048_d64", "f32"), ("gemm_4096_4096_4096", "f32")]
        metrics = ",".join([
            "gpu__time_duration.sum", "launch__registers_per_thread",
            "launch__occupancy_limit_registers",
            "sm__warps_active.avg.pct_of_peak_sustained_active",
            "sm__throughput.avg.pct_of_peak_sustained_elapsed",
            "dram__throughput.avg.pct_of_peak_sustained_elapsed",
            "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
            "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
            "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
            "smsp__average_warp_latency_issue_stalled_barrier",
            "smsp__average_warp_latency_issue_stalled_short_scoreboard",
            "smsp__average_warp_latency_issue_stalled_long_scoreboard"])
        text = []
        for name, dtype in picks:
            left = deadline - self.clock.elapsed()
            if left < 20:
                text.append(f"{name} {dtype}: skipped, out of time")
                continue
            item = bench.get(name)
            if not item or dtype not in item["artifacts"]:
                continue
            inputs = self.bench_inputs.get(name) or self.save_inputs(
                name, bench_arrays(item))
            # The model's kernels with the most work: the attention or the
            # GEMM is the launch of its own name (one or two per run).
            # --target-processes all: without it ncu "failed to connect"
            # to tfm-run on the H200 (2026-11-27).
            command = [tool, "--clock-control", "none",
                       "--target-processes", "all", "--metrics", metrics,
                       "--launch-count", "4", self.tfm_run,
                       self.path(item["artifacts"][dtype]), "--quiet"]
            for key, path in inputs.items():
                command += ["--input", f"{key}={path}"]
            try:
                run = subprocess.run(command, capture_output=True, text=True,
                                     timeout=min(left, 90))
                text.append(f"=== {name} {dtype} (exit {run.returncode})\n"
                            f"{run.stdout[-6000:]}{tail(run.stderr, 5)}")
            except subprocess.TimeoutExpired as e:
                text.append(f"{name} {dtype}: ncu timed out after "
                            f"{min(left, 90):.0f} s\n"
                            f"{(e.stdout or b'')[-3000:]!r}")
        if any("Failed to connect" in t for t in text):
            text.append(self.ncu_probe(tool))
        return "\n".join(text)

    def ncu_probe(self, tool):
        """Whether ncu profiles anything here: a PyTorch kernel, so that a
        connection failure on tfm-run can be told from ncu not working."""
        probe = [tool, "--clock-control", "none", "--target-processes", "all",
                 "--section", "SpeedOfLight", sys.executable, "-c",
                 "import torch; x = torch.ones(1 << 20, device='cuda'); "
                 "print(float((x * 2).sum()))"]
        try:
            run = subprocess.run(probe, capture_output=True, text=True,
                                 timeout=60)
            return (f"=== probe: ncu on a PyTorch kernel (exit "
                    f"{run.returncode})\n{run.stdout[-3000:]}"
                    f"{tail(run.stderr, 10)}")
        except subprocess.TimeoutExpired:
            return "=== probe: ncu on a PyTorch kernel timed out after 60 s"

    # -- the whole run -------------------------------------------------------

    def run(self):
        phases = self.args.phases.split(",")
        budget = self.args.budget
        why = self.probe()
        cases = self.selected(self.manifest["cases"])
        if why:
            self.summary["skipped_because"] = why
            self.summary["cases"] = [skipped(c, why) for c in cases]
            self.summary["sanitize"] = [
                dict(name=c["name"], group=c["group"], dtype=c["dtype"],
                     tool="compute-sanitizer", status="skipped", message=why)
                for c in cases if c.get("sanitize")]
            self.summary["bench"] = [
                {"name": b["name"], "status": "skipped", "message": why}
                for b in self.selected(self.manifest["bench"])]
            return self.finish()
        self.note(f"device: {self.summary['device']}; "
                  f"{self.summary.get('nvidia_smi', '')}")
        # Shares of the budget, each phase until its cumulative deadline.
        self.summary["cases"] = (self.cases(0.45 * budget) if "cases" in phases
                                 else [skipped(c, "phase not asked for")
                                       for c in cases])
        self.note(f"cases done at {self.clock.elapsed():.0f} s")
        self.summary["sanitize"] = (self.sanitize(0.62 * budget)
                                    if "sanitize" in phases else [])
        self.note(f"sanitizer done at {self.clock.elapsed():.0f} s")
        self.summary["bench"] = (self.bench(0.9 * budget)
                                 if "bench" in phases else [])
        self.note(f"benchmarks done at {self.clock.elapsed():.0f} s")
        if "ncu" in phases:
            text = self.ncu(budget)
            with open(os.path.join(self.out, "ncu.txt"), "w") as f:
                f.write(text + "\n")
        return self.finish()

    def finish(self):
        self.summary["seconds"] = round(self.clock.elapsed(), 1)
        for f in self.logs.values():
            f.close()
        shutil.rmtree(self.work, ignore_errors=True)
        with open(os.path.join(self.out, "summary.json"), "w") as f:
            json.dump(self.summary, f, indent=1)
        markdown = render(self.summary)
        with open(os.path.join(self.out, "summary.md"), "w") as f:
            f.write(markdown)
        print(markdown, flush=True)
        bad = [c for c in self.summary["cases"]
               if c["status"] in ("fail", "error")]
        return 1 if bad else 0


def bench_arrays(item):
    """The random inputs of an attention or GEMM benchmark."""
    if item["kind"] == "attention":
        shape = tuple(item[k] for k in ("B", "H", "S", "D"))
        return {n: kit_data.normal(shape, seed)
                for seed, n in enumerate("qkv")}
    M, N, K = item["M"], item["N"], item["K"]
    return {"a": kit_data.normal((M, K), 1), "b": kit_data.normal((K, N), 2)}


def skipped(case, why):
    return {"group": case["group"], "name": case["name"],
            "dtype": case["dtype"], "arch": case["arch"],
            "status": "skipped", "message": why}


def find_tool(name):
    found = shutil.which(name)
    if found:
        return found
    for candidate in (f"/usr/local/cuda/bin/{name}",
                      *sorted(f"/opt/nvidia/nsight-compute/{v}/{name}"
                              for v in (os.listdir("/opt/nvidia/nsight-compute")
                                        if os.path.isdir(
                                            "/opt/nvidia/nsight-compute")
                                        else []))):
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def render(summary):
    lines = ["# GPU kit results", ""]
    lines.append(f"device: {summary.get('device', '-')}; "
                 f"{summary.get('nvidia_smi', '')}  ")
    lines.append(f"kit {summary.get('kit_commit')} built "
                 f"{summary.get('kit_built')}; ran {summary['seconds']} s of "
                 f"a {summary['budget_s']} s budget; PyTorch "
                 f"{summary.get('torch', '-')}")
    if "skipped_because" in summary:
        lines.append(f"\nEverything skipped: {summary['skipped_because']}")
    lines += ["", "| group | pass | fail | error | skipped | largest abs "
              "error |", "|---|---|---|---|---|---|"]
    groups = {}
    for c in summary["cases"]:
        g = groups.setdefault(c["group"], {"pass": 0, "fail": 0, "error": 0,
                                           "skipped": 0, "worst": 0.0})
        g[c["status"]] += 1
        for e in c.get("errors", {}).values():
            g["worst"] = max(g["worst"], e["max_abs"])
    for name, g in groups.items():
        lines.append(f"| {name} | {g['pass']} | {g['fail']} | {g['error']} | "
                     f"{g['skipped']} | {g['worst']:.1e} |")
    bad = [c for c in summary["cases"] if c["status"] in ("fail", "error")]
    if bad:
        lines += ["", f"## Failed or errored ({len(bad)})", ""]
        for c in bad[:40]:
            message = c["message"].replace("\n", " / ")[:400]
            lines.append(f"- {c['status']} {c['group']} {c['name']}: "
                         f"{message}")
        if len(bad) > 40:
            lines.append(f"- ... {len(bad) - 40} more in summary.json")
    if "skipped_because" in summary:
        lines.append(f"\n{len(summary.get('sanitize', []))} sanitizer runs "
                     f"and {len(summary.get('bench', []))} benchmarks "
                     "skipped as well.")
    elif summary.get("sanitize"):
        lines += ["", "## compute-sanitizer", "",
                  "| case | dtype | tool | status | report |",
                  "|---|---|---|---|---|"]
        for s in summary["sanitize"]:
            report = s.get("report") or s.get("message", "")
            lines.append(f"| {s['group']} {s['name']} | {s['dtype']} | "
                         f"{s['tool']} | {s['status']} | "
                         f"{report.replace(chr(10), ' / ')[:200]} |")
    if summary.get("bench") and "skipped_because" not in summary:
        lines += ["", "## Benchmarks (minimum of the runs, CUDA events; "
                  "error: largest |y - float64| / largest |float64|)", "",
                  "| workload | dtype | tfm ms | tfm TFLOP/s | PyTorch ms | "
                  "tfm / PyTorch speed | tfm error | PyTorch error |",
                  "|---|---|---|---|---|---|---|---|"]
        for r in summary["bench"]:
            if r.get("status") != "ok":
                lines.append(f"| {r.get('label', r['name'])} | "
                             f"{r.get('dtype', '')} | {r['status']}: "
                             f"{r.get('message', '')[:200]} | | | | | |")
                continue
            tflops = r["flops"] / (r["tfm_ms"] * 1e9)
            torch_ms = r.get("torch_ms")
            speed = f"{torch_ms / r['tfm_ms']:.2f}x" if torch_ms else "-"
            lines.append(
                f"| {r['label']} | {r['dtype']} | {r['tfm_ms']:.3f} | "
                f"{tflops:.2f} | {f'{torch_ms:.3f}' if torch_ms else '-'} | "
                f"{speed} | "
                f"{fmt_err(r.get('tfm_error'))} | "
                f"{fmt_err(r.get('torch_error'))} |")
    if summary["notes"]:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in summary["notes"]]
    return "\n".join(lines) + "\n"


def fmt_err(value):
    return "-" if value is None else f"{value:.1e}"


def unpack(kit):
    """The folder holding manifest.json: the kit itself, or its payload
    unpacked under the temporary directory (once per payload: 104 MiB that
    must not travel back with the kit)."""
    if os.path.exists(os.path.join(kit, "manifest.json")):
        return kit
    payload = os.path.join(kit, "payload.tar.xz")
    stat = os.stat(payload)
    target = os.path.join(tempfile.gettempdir(),
                          f"tfm-gpu-kit-{stat.st_size}-{int(stat.st_mtime)}")
    if os.path.exists(os.path.join(target, "manifest.json")):
        return target
    import tarfile
    partial = target + ".partial"
    shutil.rmtree(partial, ignore_errors=True)
    os.makedirs(partial)
    with tarfile.open(payload) as archive:
        archive.extractall(partial)
    os.rename(partial, target)
    return target


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kit", default=HERE)
    parser.add_argument("--out", default=os.environ.get(
        "OUT", os.path.join(HERE, "results")))
    parser.add_argument("--budget", type=float, default=float(
        os.environ.get("KIT_BUDGET_S", 450)))
    parser.add_argument("--only", default=os.environ.get("KIT_ONLY"))
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--phases", default=os.environ.get(
        "KIT_PHASES", "cases,sanitize,bench,ncu"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    args.kit = unpack(os.path.abspath(args.kit))
    # tfm-run's libraries that a CUDA image may lack (libfmt).
    os.environ["LD_LIBRARY_PATH"] = os.pathsep.join(
        [os.path.join(args.kit, "lib")]
        + [p for p in [os.environ.get("LD_LIBRARY_PATH")] if p])
    return Runner(args).run()


if __name__ == "__main__":
    sys.exit(main())
