#!/usr/bin/env python3
"""bench/decode/fixture_accuracy.py: tfm and llama.cpp against the float64
references of the decoder fixtures (tests/reference/decoders).

    PYTHONPATH=<gguf package> bench/decode/fixture_accuracy.py \\
        --python LLAMA_VENV/bin/python [--tfm-bin build/bin] [--work DIR]

For each F16 and quantized fixture file (<arch>/model-f16.gguf,
<arch>/model-q.gguf, <arch>-kquant/model.gguf) it feeds the reference's
greedy sequence (generate_prompt then <stem>.generate_tokens, without the
last token) in one prefill to both runtimes and compares the next-token
logits of the prompt's last position and of each generated one with
<stem>.decode_logits.npy (float64 transformers on the file's own
dequantized weights, which generate.py checked against cached decoding).
Printed as max |logits - reference| in units of the reference batch
logits' standard deviation (the unit of the README's table), and the RMS.

tfm: examples/llama/llama.tfm compiled against the file itself (tfm-run
--generate 1 --output logits). llama.cpp: a copy of the file with the
tokenizer keys it needs to load (placeholder tokens; no other change: the
tensor bytes are the file's) through llama-cpp-python's C API in VENV's
python, with repacking into extra buffer types (AMX) off: with it on,
llama.cpp 0.3.36 crashes in llama_decode on these tiny models. This script
needs numpy and the gguf package (to copy the files); the venv needs
llama-cpp-python and numpy. Accuracy, not speed: nothing is timed.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FIXTURES = os.path.join(ROOT, "tests", "reference", "decoders")
FILES = [(arch, stem) for arch in ("llama", "qwen2", "gemma3")
         for stem in ("model-f16", "model-q")] + \
        [(arch + "-kquant", "model") for arch in ("llama", "qwen2", "gemma3")]

LLAMA_CPP = r"""
import sys, numpy as np, llama_cpp as lc
path, out = sys.argv[1], sys.argv[2]
toks = [int(x) for x in sys.argv[3:]]
lc.llama_backend_init()
mp = lc.llama_model_default_params()
mp.use_extra_bufts = False
model = lc.llama_model_load_from_file(path.encode(), mp)
assert model, path
cp = lc.llama_context_default_params()
cp.n_ctx = cp.n_batch = cp.n_ubatch = 64
cp.n_threads = cp.n_threads_batch = 2
ctx = lc.llama_init_from_model(model, cp)
assert ctx
batch = lc.llama_batch_init(len(toks), 0, 1)
for i, t in enumerate(toks):
    batch.token[i], batch.pos[i], batch.n_seq_id[i] = t, i, 1
    batch.seq_id[i][0], batch.logits[i] = 0, 1
batch.n_tokens = len(toks)
assert lc.llama_decode(ctx, batch) == 0
vocab = lc.llama_vocab_n_tokens(lc.llama_model_get_vocab(model))
np.save(out, np.array([np.ctypeslib.as_array(lc.llama_get_logits_ith(ctx, i),
                                             shape=(vocab,)).copy()
                       for i in range(len(toks))]))
"""


def with_vocab(src, dst):
    """`src` with placeholder tokenizer keys (a `llama` vocabulary of the
    embedding's size) and a context length of 2048 (llama.cpp sizes its
    context from it); every tensor's bytes as they are."""
    import gguf
    reader = gguf.GGUFReader(src)
    arch = reader.fields["general.architecture"].contents()
    writer = gguf.GGUFWriter(dst, arch=arch)
    for name, field in reader.fields.items():
        if name.startswith("GGUF.") or name == "general.architecture":
            continue
        if name.endswith(".context_length"):
            writer.add_uint32(name, 2048)
            continue
        kind = field.types[0]
        sub = field.types[-1] if kind == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(name, field.contents(), kind, sub)
    vocab = next(int(t.shape[1]) for t in reader.tensors
                 if t.name == "token_embd.weight")
    writer.add_string("tokenizer.ggml.model", "llama")
    writer.add_array("tokenizer.ggml.tokens",
                     ["<unk>", "<s>", "</s>"] + [f"t{i}" for i in range(3, vocab)])
    writer.add_array("tokenizer.ggml.scores", [0.0] * vocab)
    writer.add_array("tokenizer.ggml.token_type", [2, 3, 3] + [1] * (vocab - 3))
    for t in reader.tensors:
        writer.add_tensor(t.name, t.data, raw_dtype=t.tensor_type)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def tfm_logits(tfm_bin, gguf_path, ids_path, work, name):
    so = os.path.join(work, name + ".so")
    out = os.path.join(work, name + ".tfm.npy")
    subprocess.check_call([os.path.join(tfm_bin, "tfm-compile"),
                           os.path.join(ROOT, "examples", "llama", "llama.tfm"),
                           "--weights", gguf_path, "-o", so])
    subprocess.check_call([os.path.join(tfm_bin, "tfm-run"), so, "--generate", "1",
                           "--input", "input_ids=" + ids_path,
                           "--output", "logits=" + out],
                          stdout=subprocess.DEVNULL)
    return np.load(out)[0]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--python", required=True,
                   help="a python with llama-cpp-python and numpy")
    p.add_argument("--tfm-bin", default=os.path.join(ROOT, "build", "bin"))
    p.add_argument("--work", default=None)
    a = p.parse_args()
    work = a.work or tempfile.mkdtemp(prefix="tfm-fixture-accuracy-")
    os.makedirs(work, exist_ok=True)
    print("| file | tfm max / RMS | llama.cpp max / RMS |")
    print("|---|---|---|")
    for folder, stem in FILES:
        base = os.path.join(FIXTURES, folder)
        want = np.load(os.path.join(base, stem + ".decode_logits.npy"))
        sd = np.load(os.path.join(base, stem + ".logits.npy")).std()
        tokens = np.load(os.path.join(base, stem + ".generate_tokens.npy"))[0]
        sequence = tokens[:-1].astype(np.int64)
        steps = want.shape[0]
        name = folder + "-" + stem
        ids_path = os.path.join(work, name + ".ids.npy")
        np.save(ids_path, sequence[None, :])
        got = {"tfm": tfm_logits(a.tfm_bin, os.path.join(base, stem + ".gguf"),
                                 ids_path, work, name)}
        copy = os.path.join(work, name + ".llama-cpp.gguf")
        with_vocab(os.path.join(base, stem + ".gguf"), copy)
        out = os.path.join(work, name + ".llama-cpp.npy")
        subprocess.check_call([a.python, "-c", LLAMA_CPP, copy, out] +
                              [str(t) for t in sequence],
                              stderr=subprocess.DEVNULL)
        got["llama.cpp"] = np.load(out)
        cells = []
        for runtime in ("tfm", "llama.cpp"):
            diff = got[runtime][-steps:].astype(np.float64) - want
            cells.append(f"{np.abs(diff).max() / sd:.3g} / "
                         f"{np.sqrt((diff ** 2).mean()) / sd:.3g}")
        print(f"| `{folder}/{stem}.gguf` | {cells[0]} | {cells[1]} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
