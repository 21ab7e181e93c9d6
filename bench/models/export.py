"""Writes each workload's files: weights, input, PyTorch eager reference, .tfm, ONNX.

    work/<name>/weights.safetensors   the module's state_dict, PyTorch names
    work/<name>/hf/                   hfbert: BertModel.save_pretrained (config.json,
                                      model.safetensors) and a BertTokenizer with a
                                      generated vocabulary (CTranslate2's converter
                                      reads one); tfm compiles hf/model.safetensors
    work/<name>/x.npy                 the input, f32[1, S, E] (or [1, M, K]);
                                      q.npy, k.npy, v.npy for attention; input_ids.npy,
                                      token_type_ids.npy, attention_mask.npy (int64)
                                      for hfbert
    work/<name>/ref.npy               PyTorch eager's output (the reference)
    work/<name>/model.tfm             the tfm model (workloads.tfm_source)
    work/<name>/model.onnx            torch.onnx.export of the same module
    work/<name>/export.json           what was written, and by which torch

Files are reused when export.json says they came from the same workload
definition and torch version (delete work/ to redo them).
"""

import json
import os
import sys
import time

import numpy as np

import workloads


def _key(w, torch_version):
    key = {"workload": w, "torch": torch_version,
           "format": {"linear": 4, "encoder": 5, "hfbert": 1}.get(w["kind"], 6)}
    if w["kind"] == "hfbert":
        from importlib.metadata import version
        key["transformers"] = version("transformers")
    return key


def export_onnx(module, xs, names, path, dynamo_first):
    """torch.onnx.export with the dynamo exporter (needs onnxscript; weights go
    to model.onnx.data next to model.onnx) or the TorchScript exporter, the
    other one if the first fails. Encoders go through dynamo: in torch 2.15 the
    TorchScript exporter fails on one nn.TransformerEncoderLayer (is_causal
    traced as a tensor), and for an nn.TransformerEncoder it writes a graph
    whose shapes IREE's importer cannot infer (a 5-d onnx.Transpose stays
    unlowered). nn.Linear goes through TorchScript, which takes 0.3 s instead
    of 3 s. Returns a note ('' when fine)."""
    import torch
    errors = []
    for dynamo in ((True, False) if dynamo_first else (False, True)):
        try:
            kwargs = {"dynamo": dynamo} if "dynamo" in torch.onnx.export.__code__.co_varnames else {}
            # without the fused fast path of nn.TransformerEncoderLayer, which
            # has no ONNX symbolic
            fast = torch.backends.mha.get_fastpath_enabled()
            torch.backends.mha.set_fastpath_enabled(False)
            try:
                with torch.no_grad():
                    torch.onnx.export(module, tuple(xs), path, input_names=names, output_names=["y"],
                                      opset_version=17 if not dynamo else 18, **kwargs)
            finally:
                torch.backends.mha.set_fastpath_enabled(fast)
            return ""
        except Exception as e:  # noqa: BLE001 -- any exporter failure is reported
            errors.append(f"{'dynamo' if dynamo else 'torchscript'}: {type(e).__name__}: {str(e)[:200]}")
    for p in (path, path + ".data"):
        if os.path.exists(p):
            os.remove(p)
    return "; ".join(errors)


def save_hf_checkpoint(bert, path):
    """save_pretrained (config.json + model.safetensors) and a BertTokenizer
    whose vocabulary is generated ([PAD] [UNK] [CLS] [SEP] [MASK] tok5 ...):
    the ids are random, no text is tokenized, but CTranslate2's converter
    stores the model's vocabulary."""
    from transformers import BertTokenizer
    if not hasattr(bert.config, "position_embedding_type"):
        # transformers 5 dropped the key (absolute positions only);
        # CTranslate2's converter still asserts it is "absolute"
        bert.config.position_embedding_type = "absolute"
    bert.save_pretrained(path, safe_serialization=True)
    vocab = os.path.join(path, "vocab.txt")
    n = bert.config.vocab_size
    with open(vocab, "w") as f:
        f.write("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
                          + [f"tok{i}" for i in range(5, n)]) + "\n")
    BertTokenizer(vocab=vocab).save_pretrained(path)


def export_workload(w, work_dir, log=print):
    import torch
    d = os.path.join(work_dir, w["name"])
    os.makedirs(d, exist_ok=True)
    meta_path = os.path.join(d, "export.json")
    key = _key(w, torch.__version__)
    if os.path.exists(meta_path):
        with open(meta_path) as f:
            meta = json.load(f)
        if meta.get("key") == key and all(
                os.path.exists(os.path.join(d, n))
                for n in [workloads.weights_file(w), "ref.npy", "model.tfm"]
                + [f"{i}.npy" for i in workloads.input_shapes(w)]):
            return meta
    t0 = time.time()
    module = workloads.build_module(w)
    g = torch.Generator().manual_seed(1)
    shapes = workloads.input_shapes(w)
    if w["kind"] == "hfbert":
        # random token ids past the special ones, one segment, nothing masked
        ids = torch.randint(5, w["config"]["vocab_size"], shapes["input_ids"], generator=g)
        xs = [ids, torch.zeros_like(ids), torch.ones_like(ids)]
    else:
        xs = [torch.randn(*shape, generator=g) for shape in shapes.values()]
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    with torch.no_grad():
        ref = module(*xs)

    if w["kind"] == "hfbert":
        save_hf_checkpoint(module.bert, os.path.join(d, "hf"))
    else:
        sd = {k: v.detach().contiguous() for k, v in module.state_dict().items()}
        from safetensors.torch import save_file
        save_file(sd, os.path.join(d, "weights.safetensors"))
    for name, x in zip(shapes, xs):
        np.save(os.path.join(d, f"{name}.npy"),
                x.numpy().astype(np.int64 if w["kind"] == "hfbert" else np.float32))
    np.save(os.path.join(d, "ref.npy"), ref.numpy().astype(np.float32))
    with open(os.path.join(d, "model.tfm"), "w") as f:
        f.write(workloads.tfm_source(w))
    for stale in ("model.onnx", "model.onnx.data"):
        if os.path.exists(os.path.join(d, stale)):
            os.remove(os.path.join(d, stale))
    if w["kind"] == "hfbert":
        # The same weights with transformers' "eager" attention (matmul, softmax,
        # matmul) and transformers 4's mask: the pattern ONNX Runtime's BERT
        # optimizer fuses into its Attention op (workloads.hf_bert_onnx_module);
        # TorchScript first, whose graphs that optimizer knows.
        module = workloads.hf_bert_onnx_module(workloads.build_bert(w, attn_implementation="eager"))
    onnx_note = export_onnx(module, xs, list(shapes), os.path.join(d, "model.onnx"),
                            dynamo_first=w["kind"] not in ("linear", "hfbert"))
    meta = {"key": key, "onnx_note": onnx_note, "export_s": round(time.time() - t0, 2)}
    with open(meta_path, "w") as f:
        json.dump(meta, f, indent=1)
    log(f"exported {w['name']} in {meta['export_s']} s"
        + (f" (ONNX export failed: {onnx_note})" if onnx_note else ""))
    return meta


if __name__ == "__main__":
    # python export.py WORK_DIR [NAME-SUBSTRING ...]: export without timing
    ws = workloads.all_workloads(only=sys.argv[2:] or None)
    for w in ws:
        export_workload(w, sys.argv[1])
