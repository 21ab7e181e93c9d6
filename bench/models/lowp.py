"""Prepares the low-precision peers' models of an hfbert workload (run by
main.py in a subprocess of the venv's python, like iree_compile.py):

    python lowp.py ort-int8 WORK/<name>    model.onnx -> model.opt.onnx -> model.int8.onnx
    python lowp.py ct2 WORK/<name>         hf/ -> ct2/ (CTranslate2, float32)

ort-int8: onnxruntime.transformers.optimizer.optimize_model(model.onnx,
model_type='bert', num_heads, hidden_size) -- Attention, SkipLayerNormalization,
Gelu fused -- then onnxruntime.quantization.quantize_dynamic: int8 weights
(QuantType.QInt8, symmetric), activations quantized to uint8 at run time,
one scale per tensor (per_channel=False, the default; --per-channel to
change). The optimizer's own reshapes carry no type, so
DefaultTensorType=FLOAT is passed.

ct2: ctranslate2.converters.TransformersConverter(hf/).convert(ct2/) with no
quantization: the float32 model, which peers.py loads with
compute_type="float32" (ct2-f32) or "int8" (ct2-int8: weights quantized to
int8 at load, per output channel, CTranslate2's only int8 scheme).

Each writes <step>.json beside the model ({"prep_s": seconds, ...} or
{"error": message}), reused while its input is unchanged.
"""

import json
import os
import sys
import time
import traceback


def _cached(d, step, inputs, extra):
    path = os.path.join(d, f"{step}.json")
    stamp = [os.path.getmtime(os.path.join(d, i)) for i in inputs] + [extra]
    if os.path.exists(path):
        with open(path) as f:
            meta = json.load(f)
        if meta.get("stamp") == stamp:
            return path, stamp, meta
    return path, stamp, None


def ort_int8(d, per_channel=False):
    w = _workload(d)
    path, stamp, meta = _cached(d, "ort_int8", ["model.onnx"], {"per_channel": per_channel})
    out = os.path.join(d, "model.int8.onnx")
    if meta is not None and ("error" in meta or os.path.exists(out)):
        return meta
    meta = {"stamp": stamp, "per_channel": per_channel}
    try:
        import onnx
        from onnxruntime.quantization import QuantType, quantize_dynamic
        from onnxruntime.transformers.optimizer import optimize_model
        t0 = time.perf_counter()
        opt = optimize_model(os.path.join(d, "model.onnx"), model_type="bert",
                             num_heads=w["H"], hidden_size=w["E"])
        meta["fused"] = {k: v for k, v in opt.get_fused_operator_statistics().items() if v}
        opt_path = os.path.join(d, "model.opt.onnx")
        opt.save_model_to_file(opt_path)
        meta["optimize_s"] = time.perf_counter() - t0
        t1 = time.perf_counter()
        quantize_dynamic(opt_path, out, weight_type=QuantType.QInt8, per_channel=per_channel,
                         extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
        meta["quantize_s"] = time.perf_counter() - t1
        meta["prep_s"] = time.perf_counter() - t0
        from collections import Counter
        ops = Counter(n.op_type for n in onnx.load(out, load_external_data=False).graph.node)
        meta["ops"] = dict(ops.most_common())
    except Exception as e:  # noqa: BLE001 -- reported in the table
        traceback.print_exc()
        meta["error"] = f"{type(e).__name__}: {e}"[:300]
        if os.path.exists(out):
            os.remove(out)
    with open(path, "w") as f:
        json.dump(meta, f, indent=1)
    return meta


def ct2(d):
    path, stamp, meta = _cached(d, "ct2", ["hf/model.safetensors"], {})
    out = os.path.join(d, "ct2")
    if meta is not None and ("error" in meta or os.path.exists(os.path.join(out, "model.bin"))):
        return meta
    meta = {"stamp": stamp}
    try:
        import ctranslate2
        t0 = time.perf_counter()
        ctranslate2.converters.TransformersConverter(os.path.join(d, "hf")).convert(out, force=True)
        meta["prep_s"] = time.perf_counter() - t0
    except Exception as e:  # noqa: BLE001
        traceback.print_exc()
        meta["error"] = f"{type(e).__name__}: {e}"[:300]
    with open(path, "w") as f:
        json.dump(meta, f, indent=1)
    return meta


def _workload(d):
    with open(os.path.join(d, "export.json")) as f:
        return json.load(f)["key"]["workload"]


if __name__ == "__main__":
    step, d = sys.argv[1], sys.argv[2]
    if step == "ort-int8":
        r = ort_int8(d, per_channel="--per-channel" in sys.argv[3:])
    elif step == "ct2":
        r = ct2(d)
    else:
        sys.exit("usage: lowp.py ort-int8|ct2 WORK/NAME [--per-channel]")
    print(json.dumps({k: v for k, v in r.items() if k != "stamp"}))
