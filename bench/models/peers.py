"""The runtimes tfm is compared with, each timed in its own forked process.

    python peers.py serve LIBRARY      (LIBRARY: torch, onnxruntime or iree)

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

LIBRARY_OF = {"eager": "torch", "compile": "torch", "ort": "onnxruntime", "iree": "iree"}


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
    m = workloads.build_module(_workload(d))
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


def run_ort(d, threads, budget):
    import onnxruntime as ort
    xs, ref = _load_io(d)
    path = os.path.join(d, "model.onnx")
    if not os.path.exists(path):
        raise RuntimeError("no model.onnx (the ONNX export failed)")
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


RUNNERS = {"eager": run_eager, "compile": run_compile, "ort": run_ort, "iree": run_iree}


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
        res["err"] = timing.rel_err(out, ref)
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
    elif library == "onnxruntime":
        import onnxruntime  # noqa: F401
    elif library == "iree":
        import iree.runtime  # noqa: F401
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
        sys.exit("usage: peers.py serve torch|onnxruntime|iree")
