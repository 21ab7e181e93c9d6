"""The markdown report of a bench/models run (header, two tables, footnotes).

    python table.py work/results.json      reprints the report of a run
"""

import json
import sys

NAMES = {"tfm": "tfm", "eager": "torch eager", "compile": "torch.compile",
         "ort": "ONNX Runtime", "iree": "IREE",
         "tfm-bf16": "tfm bf16", "tfm-int8": "tfm int8", "ort-int8": "ONNX Runtime int8",
         "openvino-f32": "OpenVINO f32", "openvino-default": "OpenVINO default",
         "ct2-f32": "CTranslate2 f32", "ct2-int8": "CTranslate2 int8"}
SHORT = {"tfm": "tfm", "eager": "eager", "compile": "compile", "ort": "ORT", "iree": "IREE"}
# max |y - ref| / max |ref| against PyTorch eager above which a row is marked
TOL_LAYER = 1e-4
# low-precision rows are not held to fp32's tolerance; below this cosine
# similarity with eager's output they are marked
COS_LOWP = 0.99


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
    status = r.get("status", "error")
    if status == "unsupported":
        status = "not supported by this build"
    return f"{status}{notes.ref(f'{NAMES[who]}: ' + str(r.get('error', '?')))}"


def runtime_name(k, r):
    """The row's runtime; OpenVINO's default says which precision it picked."""
    if k == "openvino-default" and r.get("precision"):
        return f"{NAMES[k]} ({r['precision']})"
    return NAMES[k]


def lowp_peak_of(r, lowp):
    """(the peak of the instruction a row's precision uses, None), (None, why
    it was not measured), or (None, None) for an fp32 row."""
    prec = r.get("precision", "f32")
    key, unit = {"bf16": ("bf16", "gflops"), "int8": ("vnni", "gops")}.get(prec, (None, None))
    if key is None:
        return None, None
    p = (lowp or {}).get(key, {})
    return (p[unit], None) if unit in p else (None, p.get("skipped", "not measured"))


def fmt_cos(c):
    if c is None:
        return "-"
    # as many nines as it takes to tell the rows apart
    return "1.000000" if c >= 0.9999995 else f"{c:.6f}"


def header(meta):
    m, p, v = meta["machine"], meta["peak"], meta["versions"]
    avx512 = ", ".join(m.get("avx512") or []) or "none"
    lp = meta.get("lowp_peak") or {}
    lines_lp = []
    if lp:
        b, vn = lp.get("bf16", {}), lp.get("vnni", {})
        lines_lp.append(
            "- low-precision peaks (1 core, best of the start and the end of the run): "
            + (f"**{b['gflops']:.1f} GFLOP/s** bf16 (`vdpbf16ps` zmm, {b['accumulators']} accumulators,"
               f" 64 flops an instruction; slowest trial {b['min']:.1f})" if "gflops" in b
               else f"bf16 skipped: {b.get('skipped')}")
            + "; " + (f"**{vn['gops']:.1f} GOP/s** int8 (`vpdpbusd` zmm, {vn['accumulators']} accumulators,"
                      f" 128 int ops an instruction; slowest {vn['min']:.1f})" if "gops" in vn
                      else f"int8 skipped: {vn.get('skipped')}")
            + ". `% lowp peak`: a bf16 row's GFLOP/s over the bf16 figure, an int8 row's over the"
              " int8 one (the same FLOP count as the fp32 rows; 1-core figures, as `% peak`).")
        lines_lp.append(
            f"- low-precision peers: transformers {v_get(meta, 'transformers')}, openvino"
            f" {v_get(meta, 'openvino')}, ctranslate2 {v_get(meta, 'ctranslate2')}; ort-int8"
            f" quantize_dynamic per_channel={meta.get('ort_int8_per_channel', False)}; tfm dtypes"
            f" {', '.join(meta.get('dtypes') or []) or 'none'}"
            + (f" (int8 with --keep-fp32 {meta['tfm_keep_fp32']})" if meta.get("tfm_keep_fp32") else ""))
    return "\n".join([
        f"- command: `{meta['command'].strip()}`",
        f"- date: {meta['date']}; total time {meta['total_s']} s",
        f"- machine: {m.get('model')}, {m.get('cpus')} CPUs ({m.get('Core(s) per socket', '?')} cores"
        f" per socket, {m.get('Thread(s) per core', '?')} thread per core), family {m.get('CPU family', '?')}"
        f" model {m.get('Model', '?')}, L2 {m.get('L2 cache', '?')}, L3 {m.get('L3 cache', '?')},"
        f" {m.get('mem_gib')} GiB; AVX2+FMA: {'yes' if m.get('avx2') else 'no'}; AVX-512: {avx512}"
        + (f"; AMX: {', '.join(m.get('amx') or []) or 'none'}" if "amx" in m else ""),
        f"- FMA peak ({p.get('isa')}, {p.get('accumulators')} accumulators, fp32, measured at the start"
        f" and the end of the run): **{p['single']:.1f} GFLOP/s on 1 core** (slowest trial"
        f" {p['single_min']:.1f}), {p['all']:.1f} GFLOP/s on {p['threads']} threads together."
        " `% peak` is against the 1-core figure, so 2-thread rows can exceed 100.",
        *lines_lp,
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


def v_get(meta, name):
    return meta.get("versions", {}).get(name, "?")


def model_table(rows, peak, notes, lowp=None):
    """One line per runtime. With `lowp` (the low-precision peaks: a run with
    HF BertModel rows) the table has a `% lowp peak`, a `max abs err` and a
    `cos` column."""
    wide = lowp is not None
    out = ["| model | GFLOP | thr | runtime | ms | GFLOP/s | % peak |"
           + (" % lowp peak |" if wide else "") + " MiB | compile s | time / tfm |"
           " err vs eager |" + (" max abs err | cos |" if wide else "") + " busy |",
           "|---|--:|--:|---|--:|--:|--:|" + ("--:|" if wide else "") + "--:|--:|--:|--:|"
           + ("--:|--:|" if wide else "") + "--:|"]
    ncols = 12 + (3 if wide else 0)
    for row in rows:
        w, n, rts = row["workload"], row["threads"], row["runtimes"]
        gflop = w["flops"] / 1e9
        t = rts.get("tfm", {})
        tfm_ms = t.get("ms") if t.get("status") == "ok" else None
        for k, r in rts.items():
            first = [w["label"], f"{gflop:.2f}", str(n), runtime_name(k, r)]
            if r.get("status") != "ok":
                out.append("| " + " | ".join(first + [cell_failed(r, notes, k)]
                                             + ["-"] * (ncols - 5)) + " |")
                continue
            gfs = w["flops"] / (r["ms"] * 1e6)
            ratio = f"{r['ms'] / tfm_ms:.2f}x" if tfm_ms else "-"
            err = fmt_err(r.get("err"))
            low = r.get("precision", "f32") != "f32"
            if low:
                if r.get("cos") is None or r["cos"] < COS_LOWP:
                    err += " FAIL"
            elif r.get("err") is not None and r["err"] > tol(w):
                err += " FAIL"
            comp = "-" if r.get("compile_s") is None else f"{r['compile_s']:.1f}"
            cells = first + [fmt_ms(r["ms"]), f"{gfs:.1f}", f"{100 * gfs / peak:.0f}" if peak else "-"]
            if wide:
                lp, why = lowp_peak_of(r, lowp)
                cells.append(f"{100 * gfs / lp:.0f}" if lp else "-" if why is None
                             else "-" + notes.ref(f"no {r['precision']} peak: {why}"))
            cells += [f"{r.get('peak_mib', 0):.0f}", comp, ratio, err]
            if wide:
                cells += [fmt_err(r.get("abs_err")), fmt_cos(r.get("cos"))]
            cells.append(fmt_busy(r.get("busy")))
            out.append("| " + " | ".join(cells) + " |")
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
    models = [r for r in results if r["workload"]["kind"] not in ("linear", "hfbert")]
    berts = [r for r in results if r["workload"]["kind"] == "hfbert"]
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
    if berts:
        parts += ["### HF BertModel (bert-base config), fp32 and low precision (batch 1)", "",
                  "transformers' `BertModel`, the same checkpoint for every runtime; input_ids"
                  " random, token_type_ids 0, attention_mask all ones. Accuracy is against PyTorch"
                  " fp32 eager on the flattened `last_hidden_state`: `err vs eager` max |y - y_eager|"
                  " / max |y_eager|, `max abs err` max |y - y_eager|, `cos` their cosine"
                  " similarity. fp32 rows FAIL above"
                  f" {TOL_LAYER:.0e} per layer (relative), low-precision rows (tfm bf16/int8,"
                  " ONNX Runtime int8, OpenVINO when it computes in bf16, CTranslate2 int8) below"
                  f" a cosine of {COS_LOWP}. `compile s`: tfm-compile; ONNX Runtime int8: its BERT"
                  " optimizer + quantize_dynamic + session creation; OpenVINO: read_model +"
                  " compile_model; CTranslate2: the conversion + loading the model (int8: weights"
                  " quantized at load). `time / tfm`: over tfm's fp32 time.", ""]
        parts += model_table(berts, peak, notes, meta.get("lowp_peak") or {}) + [""]
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
