"""bench/models driver (run.sh calls it in the venv): export, compile, time, print.

Progress goes to stderr, one line per step; the markdown report to stdout
(and work/report.md); everything measured to work/results.json; the commands
run and their output to work/bench.log.
"""

import argparse
import contextlib
import datetime
import io
import json
import os
import platform
import subprocess
import sys
import time

import iree_compile
import table
import timing
import workloads
from export import export_workload

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL_PEERS = ["eager", "compile", "ort", "iree"]
LINEAR_PEERS = ["eager", "ort", "iree"]  # torch.compile of one nn.Linear calls the same addmm
# on the hfbert workloads (transformers' BertModel) only
LOWP_PEERS = ["ort-int8", "openvino-f32", "openvino-default", "ct2-f32", "ct2-int8"]
HFBERT_PEERS = MODEL_PEERS + LOWP_PEERS
# tfm's low-precision rows (--dtypes), on the hfbert workloads
LOWP_DTYPES = ["bf16", "int8"]


def progress(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def measure_peak(helper, threads):
    try:
        p = subprocess.run([helper, "peak", "0.2", "5", str(threads)], capture_output=True,
                           text=True, timeout=60)
        return json.loads(p.stdout)
    except Exception as e:  # noqa: BLE001
        return {"isa": f"failed: {e}", "single": 0, "single_min": 0, "all": 0}


def measure_lowp_peak(helper):
    """vdpbf16ps and vpdpbusd throughput on one core (helper lowp-peak)."""
    try:
        p = subprocess.run([helper, "lowp-peak", "0.2", "5"], capture_output=True, text=True,
                           timeout=60)
        return json.loads(p.stdout)
    except Exception as e:  # noqa: BLE001
        return {"bf16": {"skipped": f"helper failed: {e}"}, "vnni": {"skipped": f"helper failed: {e}"}}


def best_lowp_peak(a, b):
    out = {}
    for k, unit in (("bf16", "gflops"), ("vnni", "gops")):
        x, y = a.get(k, {}), b.get(k, {})
        if unit in x and unit in y:
            out[k] = dict(x, **{unit: max(x[unit], y[unit]), "min": min(x["min"], y["min"])})
        else:
            out[k] = x if unit in x else y
    return out


def versions(python_bin):
    v = {"python": platform.python_version()}
    for mod, name in (("torch", "torch"), ("onnxruntime", "onnxruntime"),
                      ("iree.runtime", "iree-base-runtime"), ("iree.compiler", "iree-base-compiler"),
                      ("transformers", "transformers"), ("openvino", "openvino"),
                      ("ctranslate2", "ctranslate2")):
        try:
            from importlib.metadata import version
            v[name] = version(name)
        except Exception:  # noqa: BLE001
            v[name] = "not installed"
    return v


def machine():
    info = {"model": platform.processor() or "?", "cpus": os.cpu_count()}
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            k, _, val = line.partition(":")
            val = val.strip()
            if k == "Model name":
                info["model"] = val
            elif k == "Flags":
                flags = val.split()
                info["avx2"] = "avx2" in flags and "fma" in flags
                info["avx512"] = [f for f in flags if f.startswith("avx512")]
                info["amx"] = [f for f in flags if f.startswith("amx")]
            elif k in ("Core(s) per socket", "Thread(s) per core", "Socket(s)", "L2 cache",
                       "L3 cache", "CPU family", "Model", "Hypervisor vendor"):
                info[k] = val
    except OSError:
        pass
    with open("/proc/meminfo") as f:
        info["mem_gib"] = round(int(f.readline().split()[1]) / 2**20, 1)
    return info


def git_commit(path):
    """The checkout's commit, and whether the compiler's sources differ from it."""
    try:
        head = subprocess.run(["git", "-C", path, "log", "-1", "--format=%h"],
                              capture_output=True, text=True).stdout.strip()[:80]
        root = subprocess.run(["git", "-C", path, "rev-parse", "--show-toplevel"],
                              capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--", "compiler",
                                "dialects", "runtime", "tools"],
                               capture_output=True, text=True).stdout.strip()
        return head + (f" plus uncommitted changes to {len(dirty.splitlines())} files under"
                       " compiler/, dialects/, runtime/, tools/" if dirty else "")
    except OSError:
        return "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true",
                    help="3 model rows (one a 2-layer HF BertModel with every low-precision row),"
                         " attention at one shape, 3 linear shapes")
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    ap.add_argument("--tfm-bin", required=True)
    ap.add_argument("--tfm-cpu", default="portable",
                    help="tfm-compile --cpu (default: portable, what users get without the flag)")
    ap.add_argument("--helper", required=True)
    ap.add_argument("--work", default=os.path.join(HERE, "work"))
    ap.add_argument("--only", default="", help="comma-separated substrings of workload names")
    ap.add_argument("--peers", default=",".join(HFBERT_PEERS),
                    help="comma-separated: eager, compile, ort, iree and, on the HF BertModel rows,"
                         " the low-precision peers " + ", ".join(LOWP_PEERS))
    ap.add_argument("--dtypes", default="f32," + ",".join(LOWP_DTYPES),
                    help="tfm rows on the HF BertModel workloads: f32 (always run: the"
                         " baseline of `time / tfm`), bf16 (tfm-compile --dtype bf16), int8"
                         " (tfm-compile --quantize int8)")
    ap.add_argument("--tfm-keep-fp32", default="",
                    help="GLOB: passed to the int8 row's tfm-compile as --keep-fp32 GLOB")
    ap.add_argument("--ort-int8-per-channel", action="store_true",
                    help="quantize_dynamic(per_channel=True) for ort-int8 (default: per tensor)")
    ap.add_argument("--budget", type=float, default=None,
                    help="timed seconds per model measurement (default 1, --quick 0.5)")
    ap.add_argument("--linear-budget", type=float, default=0.2, help="... per linear measurement")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per measurement")
    ap.add_argument("--retries", type=int, default=1,
                    help="repeat a measurement (fresh process, keep the faster) while other"
                         " processes used more than --busy cores during it")
    ap.add_argument("--busy", type=float, default=0.5)
    args = ap.parse_args()

    start = time.time()
    if args.budget is None:
        args.budget = 0.5 if args.quick else 1.0
    threads = [int(t) for t in args.threads.split(",") if t]
    wanted = [p for p in args.peers.split(",") if p]
    unknown = [p for p in wanted if p not in HFBERT_PEERS]
    dtypes = [t for t in args.dtypes.split(",") if t and t != "f32"]
    unknown += [t for t in dtypes if t not in LOWP_DTYPES]
    if unknown:
        ap.error(f"unknown peers or dtypes: {', '.join(unknown)}")
    os.makedirs(args.work, exist_ok=True)
    log = open(os.path.join(args.work, "bench.log"), "w")
    venv_bin = os.path.dirname(sys.executable)

    ws = workloads.all_workloads(quick=args.quick, only=[o for o in args.only.split(",") if o])
    try:
        import transformers  # noqa: F401
    except ImportError:
        if any(w["kind"] == "hfbert" for w in ws):
            progress("transformers is not installed: the HF BertModel rows are left out")
        ws = [w for w in ws if w["kind"] != "hfbert"]
    progress(f"{len(ws)} workloads, threads {threads}, peers {wanted}, work dir {args.work}")
    peak0 = measure_peak(args.helper, max(threads))
    progress(f"FMA peak: {peak0}")
    has_bert = any(w["kind"] == "hfbert" for w in ws)
    lowp_peak0 = measure_lowp_peak(args.helper) if has_bert else {}
    if has_bert:
        progress(f"low-precision peaks: {lowp_peak0}")

    # 1. export (weights, input, reference, .tfm, .onnx)
    import torch  # noqa: F401  (after the peak: importing torch starts nothing)
    exports = {}
    for i, w in enumerate(ws):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
            import warnings
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                exports[w["name"]] = export_workload(w, args.work, log=progress)
        log.write(buf.getvalue())
    progress("exported all workloads")

    # The tools run from each workload's directory.
    args.tfm_bin = os.path.abspath(args.tfm_bin)
    exe = os.path.join(args.tfm_bin, "tfm-compile")
    tfm_built = (datetime.datetime.fromtimestamp(os.path.getmtime(exe), datetime.timezone.utc)
                 .strftime("%Y-%m-%d %H:%M UTC") if os.path.exists(exe) else "?")

    # 2. compile: tfm (always, it is what is being measured) and IREE (cached)
    compiled = {}
    for w in ws:
        d = os.path.join(args.work, w["name"])
        s, err = timing.compile_tfm(args.tfm_bin, d, args.timeout, log, args.tfm_cpu)
        c = {"tfm": {"compile_s": s, "error": err}}
        if "iree" in wanted:
            c["iree"] = iree_compile.compile_iree(venv_bin, d, args.timeout, log)
        compiled[w["name"]] = c
        progress(f"compiled {w['name']}: tfm " + (f"{s:.1f} s" if s is not None else err)
                 + ("" if "iree" not in c else ", iree " + (
                     f"{c['iree']['compile_s']:.1f} s" if "compile_s" in c["iree"]
                     else c["iree"]["error"])))
        if w["kind"] == "hfbert":
            for dt in dtypes:
                extra = [f"--keep-fp32={args.tfm_keep_fp32}"] if dt == "int8" and args.tfm_keep_fp32 else []
                s2, err2 = timing.compile_tfm(args.tfm_bin, d, args.timeout, log, args.tfm_cpu,
                                              dtype=dt, extra=extra)
                c["tfm-" + dt] = {"compile_s": s2, "error": err2}
                progress(f"compiled {w['name']}: tfm {dt} " + (f"{s2:.1f} s" if s2 is not None else err2))
            steps = (["ort-int8"] if "ort-int8" in wanted else []) \
                + (["ct2"] if any(p.startswith("ct2-") for p in wanted) else [])
            for step in steps:
                c[step] = prepare_lowp(venv_bin, step, d, args, log)
                progress(f"prepared {w['name']}: {step} " + (
                    f"{c[step]['prep_s']:.1f} s" if "prep_s" in c[step] else c[step].get("error", "?")))
        log.flush()

    # 3. measure
    servers = {}

    def server(lib):
        if lib not in servers:
            servers[lib] = timing.PeerServer(sys.executable, lib, log)
        return servers[lib]

    def retried(measure):
        r = measure()
        for _ in range(args.retries):
            if r.get("status") != "ok" or (r.get("busy") or 0) <= args.busy \
                    or r["ms"] * r.get("runs", 1) > 2000:
                break
            again = measure()
            if again.get("status") == "ok" and again["ms"] < r["ms"]:
                again["tries"] = r.get("tries", 1) + 1
                r = again
            else:
                r["tries"] = r.get("tries", 1) + 1
        return r

    results = []
    for w in ws:
        d = os.path.join(args.work, w["name"])
        is_linear = w["kind"] == "linear"
        budget = args.linear_budget if is_linear else args.budget
        peers = [p for p in (LINEAR_PEERS if is_linear else HFBERT_PEERS if w["kind"] == "hfbert"
                             else MODEL_PEERS) if p in wanted]
        for n in threads:
            row = {"workload": w, "threads": n, "runtimes": {}}
            c = compiled[w["name"]]["tfm"]
            if c["error"]:
                r = {"status": "error", "error": c["error"]}
            else:
                r = retried(lambda: timing.measure_tfm(args.helper, args.tfm_bin, d, n, budget,
                                                       args.timeout, log))
                r["compile_s"] = c["compile_s"]
            row["runtimes"]["tfm"] = r
            for dt in dtypes if w["kind"] == "hfbert" else []:
                c = compiled[w["name"]]["tfm-" + dt]
                if c["error"]:
                    r = {"status": "unsupported" if c["error"].startswith("not supported")
                         else "error", "error": c["error"]}
                else:
                    r = retried(lambda: timing.measure_tfm(args.helper, args.tfm_bin, d, n, budget,
                                                           args.timeout, log, timing.tfm_so(dt)))
                    r["compile_s"] = c["compile_s"]
                r["precision"] = dt
                row["runtimes"]["tfm-" + dt] = r
            for p in peers:
                if p == "ort" and exports[w["name"]].get("onnx_note"):
                    r = {"status": "error", "error": "ONNX export failed: " + exports[w["name"]]["onnx_note"]}
                elif p == "iree" and "error" in compiled[w["name"]].get("iree", {}):
                    r = {"status": "error", "error": compiled[w["name"]]["iree"]["error"]}
                else:
                    r = retried(lambda: server(peers_library(p)).measure(p, d, n, budget, args.timeout))
                    if p == "iree" and r.get("status") == "ok":
                        r["compile_s"] = compiled[w["name"]]["iree"].get("compile_s")
                row["runtimes"][p] = r
            results.append(row)
            progress(f"{w['name']} thr={n}: " + ", ".join(
                f"{k} {v['ms']:.3f} ms" if v.get("status") == "ok" else f"{k} {v.get('status')}"
                for k, v in row["runtimes"].items()))
            log.flush()
    for s in servers.values():
        s.close()

    peak1 = measure_peak(args.helper, max(threads))
    lowp_peak = best_lowp_peak(lowp_peak0, measure_lowp_peak(args.helper)) if has_bert else {}
    peak = {"isa": peak0.get("isa"), "accumulators": peak0.get("accumulators"),
            "single": max(peak0["single"], peak1["single"]),
            "single_min": min(peak0["single_min"], peak1["single_min"]),
            "all": max(peak0["all"], peak1["all"]), "threads": max(threads)}
    meta = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": "bench/models/run.sh " + " ".join(os.environ.get("TFM_BENCH_ARGV", "").split()),
        "machine": machine(), "peak": peak, "lowp_peak": lowp_peak,
        "versions": versions(sys.executable), "dtypes": dtypes,
        "ort_int8_per_channel": args.ort_int8_per_channel, "tfm_keep_fp32": args.tfm_keep_fp32,
        "tfm_commit": git_commit(HERE), "tfm_bin": args.tfm_bin, "threads": threads,
        "tfm_built": tfm_built,
        "budget": args.budget, "linear_budget": args.linear_budget,
        "retries": args.retries, "busy_limit": args.busy,
        "total_s": round(time.time() - start),
    }
    with open(os.path.join(args.work, "results.json"), "w") as f:
        json.dump({"meta": meta, "results": results}, f, indent=1, default=str)
    report = table.report(meta, results)
    with open(os.path.join(args.work, "report.md"), "w") as f:
        f.write(report)
    print(report)
    progress(f"done in {meta['total_s']} s; report in {args.work}/report.md")
    # a failed tfm row fails the run; a low-precision one that this build
    # does not support yet ("unsupported") does not
    bad = [r for row in results for k, r in row["runtimes"].items()
           if (k == "tfm" or k.startswith("tfm-")) and r.get("status") not in ("ok", "unsupported")]
    return 1 if bad else 0


def prepare_lowp(venv_bin, step, d, args, log):
    """lowp.py STEP DIR in a subprocess (an import or a conversion that
    crashes leaves that peer's cells saying so); returns its record."""
    cmd = [os.path.join(venv_bin, "python"), os.path.join(HERE, "lowp.py"), step, d]
    if step == "ort-int8" and args.ort_int8_per_channel:
        cmd.append("--per-channel")
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"lowp.py {step}: timeout after {args.timeout:.0f} s"}
    log.write(f"$ {' '.join(cmd)}\n{p.stdout[-4000:]}{p.stderr[-4000:]}\n")
    try:
        return json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        last = (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1]
        return {"error": f"lowp.py {step}: {last}"[:300]}


def peers_library(p):
    import peers
    return peers.LIBRARY_OF[p]


if __name__ == "__main__":
    sys.exit(main())
