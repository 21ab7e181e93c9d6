"""The runtimes tfm is compared with, each timed in its own forked process.

    python peers.py serve LIBRARY      (LIBRARY: torch, onnxruntime, iree,
                                        openvino or ctranslate2)

starts a server that imports LIBRARY once and then, for each JSON request
line on stdin ({"peer", "dir", "threads", "budget", "timeout", "result"}),
forks a child that loads the workload from "dir", runs it on "threads"
threads, times it (timing.time_calls) and writes its result as JSON to
"result"; the server answers one JSON line ({"status": "ok" | "timeout" |
"crashed", "exit": ..., "cpu_s": the child's CPU seconds}) when the child
has ended or was killed at "timeout" seconds. A child reports its peak memory as VmHWM of /proc/self/status: the
runtime's import (inherited resident pages) plus what loading and running
the model touched -- what a fresh process would show, without paying the
import (torch: ~4 s) for each of the ~600 measurements.

Peers:
  eager   PyTorch eager, torch.set_num_threads(n), inference_mode
  compile torch.compile(module) (inductor, C++ codegen); its compile time is
          the first call's time minus a normal call's
  ort     ONNX Runtime CPU on work/<name>/model.onnx, intra_op_num_threads=n
  iree    IREE llvm-cpu, work/<name>/model.vmfb (compiled by iree_compile.py),
          driver local-task with --task_topology_group_count=n

Low-precision peers (hfbert workloads; their models are prepared by lowp.py):
  ort-int8          ONNX Runtime on model.int8.onnx (BERT optimizer, then
                    quantize_dynamic: int8 weights, uint8 activations)
  openvino-f32      OpenVINO CPU on model.onnx, INFERENCE_PRECISION_HINT=f32
  openvino-default  the same with OpenVINO's default precision hint (bf16 on
                    CPUs with AVX512-BF16 or AMX); the row reports what
                    compiled_model.get_property('INFERENCE_PRECISION_HINT') says
                    (both: PERFORMANCE_HINT=LATENCY, INFERENCE_NUM_THREADS=n)
  ct2-f32, ct2-int8 CTranslate2 Encoder on ct2/ (TransformersConverter, float32),
                    compute_type float32 / int8, intra_threads=n, forward_batch;
                    its last_hidden_state
Each result says the precision it computed in ("precision").
"""

import json
import os
import signal
import sys
import tempfile
import time
import traceback

import numpy as np

import timing
import workloads

LIBRARY_OF = {"eager": "torch", "compile": "torch", "ort": "onnxruntime", "iree": "iree",
              "ort-int8": "onnxruntime", "openvino-f32": "openvino",
              "openvino-default": "openvino", "ct2-f32": "ctranslate2", "ct2-int8": "ctranslate2"}


def _workload(d):
    with open(os.path.join(d, "export.json")) as f:
        return json.load(f)["key"]["workload"]


def _load_io(d):
    """The inputs (in the module's order) and the reference output."""
    xs = [np.load(os.path.join(d, f"{n}.npy")) for n in workloads.input_shapes(_workload(d))]
    return xs, np.load(os.path.join(d, "ref.npy"))


def _torch_module(d):
    import torch
    from safetensors.torch import load_file
    w = _workload(d)
    if w["kind"] == "hfbert":
        # the checkpoint as users load it (default attention: sdpa)
        from transformers import BertModel
        return workloads.hf_bert_module(BertModel.from_pretrained(os.path.join(d, "hf")).eval())
    m = workloads.build_module(w)
    m.load_state_dict(load_file(os.path.join(d, "weights.safetensors")))
    return m.eval()


def run_eager(d, threads, budget):
    import torch
    torch.set_num_threads(threads)
    xs, ref = _load_io(d)
    t0 = time.perf_counter()
    m = _torch_module(d)
    xts = [torch.from_numpy(x) for x in xs]
    load_s = time.perf_counter() - t0

    def call():
        with torch.inference_mode():
            return m(*xts)
    r = timing.time_calls(call, budget)
    r["out"] = call().numpy()
    r["compile_s"] = None
    r["load_s"] = load_s
    return r, ref


def run_compile(d, threads, budget):
    import torch
    torch.set_num_threads(threads)
    xs, ref = _load_io(d)
    m = _torch_module(d)
    xts = [torch.from_numpy(x) for x in xs]
    cm = torch.compile(m)

    def call():
        with torch.inference_mode():
            return cm(*xts)
    t0 = time.perf_counter()
    call()
    first = time.perf_counter() - t0
    r = timing.time_calls(call, budget)
    r["compile_s"] = max(0.0, first - r["ms"] / 1e3)
    r["out"] = call().numpy()
    return r, ref


def _prep(d, step):
    """lowp.py's record of preparing a model (its time), or its error."""
    path = os.path.join(d, f"{step}.json")
    if not os.path.exists(path):
        raise RuntimeError(f"{step} was not prepared")
    with open(path) as f:
        meta = json.load(f)
    if "error" in meta:
        raise RuntimeError(f"{step}: {meta['error']}")
    return meta


def run_ort(d, threads, budget, model="model.onnx"):
    import onnxruntime as ort
    xs, ref = _load_io(d)
    path = os.path.join(d, model)
    if not os.path.exists(path):
        raise RuntimeError(f"no {model} (the ONNX export failed)")
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    t0 = time.perf_counter()
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    create_s = time.perf_counter() - t0
    feed = {i.name: x for i, x in zip(sess.get_inputs(), xs)}

    def call():
        return sess.run(None, feed)[0]
    r = timing.time_calls(call, budget)
    r["out"] = call()
    r["compile_s"] = create_s  # session creation: graph optimizations, packing
    return r, ref


def run_ort_int8(d, threads, budget):
    prep = _prep(d, "ort_int8")
    r, ref = run_ort(d, threads, budget, "model.int8.onnx")
    r["compile_s"] += prep["prep_s"]  # optimizer + quantize_dynamic + session creation
    r["precision"] = "int8"
    return r, ref


def _run_openvino(d, threads, budget, precision_hint):
    import openvino as ov
    xs, ref = _load_io(d)
    path = os.path.join(d, "model.onnx")
    if not os.path.exists(path):
        raise RuntimeError("no model.onnx (the ONNX export failed)")
    names = list(workloads.input_shapes(_workload(d)))
    cfg = {"PERFORMANCE_HINT": "LATENCY", "INFERENCE_NUM_THREADS": threads}
    if precision_hint:
        cfg["INFERENCE_PRECISION_HINT"] = precision_hint
    t0 = time.perf_counter()
    core = ov.Core()
    compiled = core.compile_model(core.read_model(path), "CPU", cfg)
    compile_s = time.perf_counter() - t0
    req = compiled.create_infer_request()
    feed = dict(zip(names, xs))

    def call():
        req.infer(feed)
        return req.get_output_tensor(0).data
    r = timing.time_calls(call, budget)
    r["out"] = np.array(call())
    r["compile_s"] = compile_s  # read_model (ONNX import) + compile_model
    p = compiled.get_property("INFERENCE_PRECISION_HINT")
    name = p.get_type_name() if hasattr(p, "get_type_name") else str(p)
    r["precision"] = {"f32": "f32", "bf16": "bf16", "f16": "f16"}.get(name, name)
    r["threads_reported"] = compiled.get_property("INFERENCE_NUM_THREADS")
    return r, ref


def run_openvino_f32(d, threads, budget):
    return _run_openvino(d, threads, budget, "f32")


def run_openvino_default(d, threads, budget):
    return _run_openvino(d, threads, budget, None)


def _run_ct2(d, threads, budget, compute_type):
    import ctranslate2
    prep = _prep(d, "ct2")
    xs, ref = _load_io(d)
    t0 = time.perf_counter()
    enc = ctranslate2.Encoder(os.path.join(d, "ct2"), device="cpu", compute_type=compute_type,
                              intra_threads=threads, inter_threads=1)
    load_s = time.perf_counter() - t0
    # input_ids and token_type_ids as lists of lists; the mask is all ones,
    # which is what an unpadded batch of one means to CTranslate2
    ids, types = xs[0].tolist(), xs[1].tolist()

    def call():
        return enc.forward_batch(ids, token_type_ids=types).last_hidden_state
    r = timing.time_calls(call, budget)
    r["out"] = np.array(call())
    r["compile_s"] = prep["prep_s"] + load_s  # conversion + load (int8: weights quantized here)
    r["precision"] = {"float32": "f32", "int8": "int8"}.get(compute_type, compute_type)
    r["compute_type"] = getattr(enc, "compute_type", compute_type)
    return r, ref


def run_ct2_f32(d, threads, budget):
    return _run_ct2(d, threads, budget, "float32")


def run_ct2_int8(d, threads, budget):
    return _run_ct2(d, threads, budget, "int8")


def run_iree(d, threads, budget):
    import iree.runtime as ireert
    xs, ref = _load_io(d)
    path = os.path.join(d, "model.vmfb")
    if not os.path.exists(path):
        note = os.path.join(d, "iree_error.txt")
        msg = open(note).read().strip().splitlines()[-1][:200] if os.path.exists(note) else ""
        raise RuntimeError(f"no model.vmfb (iree compile failed: {msg})")
    ireert.flags.parse_flags(f"--task_topology_group_count={threads}")
    config = ireert.Config("local-task")
    t0 = time.perf_counter()
    with open(path, "rb") as f:
        vmfb = f.read()
    vm_module = ireert.VmModule.copy_buffer(config.vm_instance, vmfb)
    ctx = ireert.SystemContext(config=config)
    ctx.add_vm_module(vm_module)
    load_s = time.perf_counter() - t0
    mod = ctx.modules[vm_module.name]
    names = [n for n in vm_module.function_names if not n.startswith("__")]
    fname = next((n for n in ("main_graph", "main", "forward") if n in names), names[0])
    fn = mod[fname]
    dev = config.device
    xds = [ireert.asdevicearray(dev, x) for x in xs]

    def call():
        out = fn(*xds)
        if isinstance(out, (list, tuple)):
            out = out[0]
        return out.to_host()
    r = timing.time_calls(call, budget)
    r["out"] = np.asarray(call())
    r["compile_s"] = None  # filled in by the parent from iree_compile.py
    r["load_s"] = load_s
    return r, ref


RUNNERS = {"eager": run_eager, "compile": run_compile, "ort": run_ort, "iree": run_iree,
           "ort-int8": run_ort_int8, "openvino-f32": run_openvino_f32,
           "openvino-default": run_openvino_default, "ct2-f32": run_ct2_f32,
           "ct2-int8": run_ct2_int8}


def vm_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def child(req):
    """Runs one measurement; writes the result file. In the forked child."""
    res = {"peer": req["peer"], "threads": req["threads"]}
    try:
        res["rss_start_mib"] = vm_kib("VmRSS") / 1024
        r, ref = RUNNERS[req["peer"]](req["dir"], req["threads"], req["budget"])
        out = r.pop("out")
        res.update(r)
        res.update(timing.accuracy(out, ref))
        res["status"] = "ok"
    except Exception as e:  # noqa: BLE001 -- any failure goes into the table
        res["status"] = "error"
        res["error"] = f"{type(e).__name__}: {e}"[:300]
        traceback.print_exc(file=sys.stderr)
    res["peak_mib"] = vm_kib("VmHWM") / 1024
    with open(req["result"], "w") as f:
        json.dump(res, f)


def serve(library):
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    if library == "torch":
        # inductor: compile in this process, no pool of compile workers
        os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
        import torch  # noqa: F401
        import safetensors.torch  # noqa: F401
        try:
            import transformers  # noqa: F401  (the hfbert workloads)
        except ImportError:
            pass
    elif library == "onnxruntime":
        import onnxruntime  # noqa: F401
    elif library == "iree":
        import iree.runtime  # noqa: F401
    elif library == "openvino":
        import openvino  # noqa: F401
    elif library == "ctranslate2":
        import ctranslate2  # noqa: F401
    out = sys.stdout
    sys.stdout = sys.stderr  # children print nothing on the protocol pipe
    print(json.dumps({"ready": library}), file=out, flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        if req["peer"] == "compile":
            # a cold inductor cache for each measurement, so compile times are real
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="tfm-bench-inductor-")
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                child(req)
            except BaseException:  # noqa: BLE001
                code = 3
            finally:
                sys.stderr.flush()
                os._exit(code)
        deadline = time.time() + req["timeout"]
        status, code, cpu_s = "timeout", None, None
        while time.time() < deadline:
            done, st, ru = os.wait4(pid, os.WNOHANG)
            if done:
                cpu_s = ru.ru_utime + ru.ru_stime
                code = os.waitstatus_to_exitcode(st)
                status = "ok" if code == 0 else "crashed"
                break
            time.sleep(0.02)
        else:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        print(json.dumps({"status": status, "exit": code, "cpu_s": cpu_s}), file=out, flush=True)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "serve":
        serve(sys.argv[2])
    else:
        sys.exit("usage: peers.py serve torch|onnxruntime|iree|openvino|ctranslate2")
