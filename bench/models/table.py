"""The markdown report of a bench/models run (header, two tables, footnotes).

    python table.py work/results.json      reprints the report of a run
"""

import json
import sys

NAMES = {"tfm": "tfm", "eager": "torch eager", "compile": "torch.compile",
         "ort": "ONNX Runtime", "iree": "IREE"}
SHORT = {"tfm": "tfm", "eager": "eager", "compile": "compile", "ort": "ORT", "iree": "IREE"}
# max |y - ref| / max |ref| against PyTorch eager above which a row is marked
TOL_LAYER = 1e-4


def tol(w):
    # errors of two fp32 implementations add up over a stack of layers
    return TOL_LAYER * (w.get("layers", 1) or 1)


class Notes:
    def __init__(self):
        self.items = []

    def ref(self, text):
        if text not in self.items:
            self.items.append(text)
        return f"[{self.items.index(text) + 1}]"

    def lines(self):
        return [f"[{i + 1}] {t}" for i, t in enumerate(self.items)]


def fmt_ms(ms):
    return f"{ms:.3f}" if ms < 10 else f"{ms:.2f}" if ms < 1000 else f"{ms:.0f}"


def fmt_err(e):
    return "-" if e is None else "inf" if e == float("inf") else f"{e:.1e}"


def fmt_busy(b):
    return "-" if b is None else f"{b:.2f}"


def cell_failed(r, notes, who):
    return f"{r.get('status', 'error')}{notes.ref(f'{NAMES[who]}: ' + str(r.get('error', '?')))}"


def header(meta):
    m, p, v = meta["machine"], meta["peak"], meta["versions"]
    avx512 = ", ".join(m.get("avx512") or []) or "none"
    return "\n".join([
        f"- command: `{meta['command'].strip()}`",
        f"- date: {meta['date']}; total time {meta['total_s']} s",
        f"- machine: {m.get('model')}, {m.get('cpus')} CPUs ({m.get('Core(s) per socket', '?')} cores"
        f" per socket, {m.get('Thread(s) per core', '?')} thread per core), family {m.get('CPU family', '?')}"
        f" model {m.get('Model', '?')}, L2 {m.get('L2 cache', '?')}, L3 {m.get('L3 cache', '?')},"
        f" {m.get('mem_gib')} GiB; AVX2+FMA: {'yes' if m.get('avx2') else 'no'}; AVX-512: {avx512}",
        f"- FMA peak ({p.get('isa')}, {p.get('accumulators')} accumulators, fp32, measured at the start"
        f" and the end of the run): **{p['single']:.1f} GFLOP/s on 1 core** (slowest trial"
        f" {p['single_min']:.1f}), {p['all']:.1f} GFLOP/s on {p['threads']} threads together."
        " `% peak` is against the 1-core figure, so 2-thread rows can exceed 100.",
        f"- tfm: `{meta['tfm_bin']}` (tfm-compile built {meta.get('tfm_built', '?')}); checkout at"
        f" {meta['tfm_commit']}",
        f"- peers: torch {v.get('torch')}, onnxruntime {v.get('onnxruntime')}, iree-base-compiler"
        f" {v.get('iree-base-compiler')} / iree-base-runtime {v.get('iree-base-runtime')}, Python {v.get('python')}",
        f"- timing: one warm-up, then timed runs until >= 3 runs (2 if a run takes > 1 s, 1 if > 5 s)"
        f" and >= {meta['budget']} s ({meta['linear_budget']} s for linear), at most 1000; median."
        " Each measurement in its own process; `MiB` is that process's peak RSS. A measurement"
        f" (timed runs under 2 s in all) during which other processes used more than {meta.get('busy_limit', 0.5)} cores is"
        f" repeated up to {meta.get('retries', 1)} time(s) in a fresh process, keeping the faster.",
    ])


def model_table(rows, peak, notes):
    out = ["| model | GFLOP | thr | runtime | ms | GFLOP/s | % peak | MiB | compile s | time / tfm |"
           " err vs eager | busy |",
           "|---|--:|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for row in rows:
        w, n, rts = row["workload"], row["threads"], row["runtimes"]
        gflop = w["flops"] / 1e9
        t = rts.get("tfm", {})
        tfm_ms = t.get("ms") if t.get("status") == "ok" else None
        for k, r in rts.items():
            first = [w["label"], f"{gflop:.2f}", str(n), NAMES[k]]
            if r.get("status") != "ok":
                out.append("| " + " | ".join(first + [cell_failed(r, notes, k)] + ["-"] * 7) + " |")
                continue
            gfs = w["flops"] / (r["ms"] * 1e6)
            ratio = f"{r['ms'] / tfm_ms:.2f}x" if tfm_ms else "-"
            err = fmt_err(r.get("err"))
            if r.get("err") is not None and r["err"] > tol(w):
                err += " FAIL"
            comp = "-" if r.get("compile_s") is None else f"{r['compile_s']:.1f}"
            out.append("| " + " | ".join(first + [
                fmt_ms(r["ms"]), f"{gfs:.1f}", f"{100 * gfs / peak:.0f}" if peak else "-",
                f"{r.get('peak_mib', 0):.0f}", comp, ratio, err, fmt_busy(r.get("busy"))]) + " |")
    return out


def linear_table(rows, peak, notes, peers):
    head = ["M", "K", "N", "thr", "tfm ms", "GFLOP/s", "% peak", "compile s"]
    for p in peers:
        head += [f"{SHORT[p]} ms", f"{SHORT[p]}/tfm"]
    head += ["MiB " + "/".join(SHORT[p] for p in ["tfm"] + peers), "busy", "check"]
    out = ["| " + " | ".join(head) + " |", "|" + "--:|" * (len(head) - 1) + "---|"]
    for row in rows:
        w, n, rts = row["workload"], row["threads"], row["runtimes"]
        t = rts.get("tfm", {})
        cells = [str(w["M"]), str(w["K"]), str(w["N"]), str(n)]
        tfm_ms = None
        if t.get("status") == "ok":
            tfm_ms = t["ms"]
            gfs = w["flops"] / (tfm_ms * 1e6)
            cells += [fmt_ms(tfm_ms), f"{gfs:.1f}", f"{100 * gfs / peak:.0f}" if peak else "-",
                      f"{t['compile_s']:.1f}" if t.get("compile_s") is not None else "-"]
        else:
            cells += [cell_failed(t, notes, "tfm"), "-", "-", "-"]
        mib, bad = [], []
        for k in ["tfm"] + peers:
            r = rts.get(k, {})
            ok = r.get("status") == "ok"
            if k != "tfm":
                if ok:
                    cells += [fmt_ms(r["ms"]), f"{r['ms'] / tfm_ms:.2f}x" if tfm_ms else "-"]
                else:
                    cells += [cell_failed(r, notes, k) if r else "-", "-"]
            mib.append(f"{r['peak_mib']:.0f}" if ok and r.get("peak_mib") is not None else "-")
            if ok and r.get("err") is not None and r["err"] > tol(w):
                bad.append(f"{SHORT[k]} {fmt_err(r['err'])}")
        busy = [r.get("busy") for r in rts.values() if r.get("busy") is not None]
        cells += ["/".join(mib), fmt_busy(max(busy) if busy else None),
                  "FAIL " + ", ".join(bad) if bad else "ok"]
        out.append("| " + " | ".join(cells) + " |")
    return out


def report(meta, results):
    notes = Notes()
    peak = meta["peak"]["single"]
    models = [r for r in results if r["workload"]["kind"] != "linear"]
    linears = [r for r in results if r["workload"]["kind"] == "linear"]
    parts = [header(meta), ""]
    if models:
        parts += ["### Whole models and attention (fp32, batch 1)", "",
                  "`time / tfm`: the runtime's time over tfm's (> 1: tfm is faster). `err vs eager`:"
                  " max |y - y_eager| / max |y_eager|, FAIL above"
                  f" {TOL_LAYER:.0e} per layer. `compile s`: tfm-compile; torch.compile's first call"
                  " minus a normal one (cold cache); ONNX Runtime's session creation; IREE's"
                  " iree-import-onnx + iree-compile. `busy`: cores used by other processes"
                  " during the measurement (> 0.25: disturbed).", ""]
        parts += model_table(models, peak, notes) + [""]
    if linears:
        peers = [p for p in ("eager", "compile", "ort", "iree")
                 if any(p in r["runtimes"] for r in linears)]
        parts += ["### nn.Linear sweep (y = x W^T + b, x [1, M, K], fp32)", "",
                  "GFLOP/s and % peak are tfm's (2·M·K·N FLOPs); `X/tfm`: that runtime's time over"
                  " tfm's; MiB: each runtime's peak RSS; busy: the most cores other processes used"
                  " during any of the row's measurements; check: every output within"
                  f" {TOL_LAYER:.0e} of eager (max |y - y_eager| / max |y_eager|).", ""]
        parts += linear_table(linears, peak, notes, peers) + [""]
    if notes.items:
        parts += notes.lines() + [""]
    return "\n".join(parts)


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        data = json.load(f)
    print(report(data["meta"], data["results"]))
