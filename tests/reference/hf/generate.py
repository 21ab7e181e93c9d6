#!/usr/bin/env python3
"""Generate the Hugging Face reference fixtures of tests/reference/hf/.

Small randomly initialised `transformers` models (BertModel, GPT2LMHeadModel),
saved with `save_pretrained` exactly as a user's checkpoint is, with inputs and
the outputs the real libraries compute from them.

    python3 tests/reference/hf/generate.py             # make a venv, install, run
    python3 tests/reference/hf/generate.py --python P  # use interpreter P instead
    python3 tests/reference/hf/generate.py --check     # fail unless a fresh run
                                                       # is byte-identical

Without --python, the script creates tests/reference/hf/.venv (gitignored),
installs torch (CPU wheels), transformers, safetensors and numpy from PyPI
into it, and runs itself there. See README.md next to it for what it writes.
"""

import argparse
import filecmp
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
VENV = os.path.join(HERE, ".venv")
PACKAGES = ["torch", "transformers", "safetensors", "numpy"]
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"

# The models run eagerly, in the math path the docs describe, so that the
# reference is the plain formula and not a fused kernel's rounding.
ATTN_IMPLEMENTATION = "eager"

BERT = dict(vocab_size=503, hidden_size=64, num_hidden_layers=2,
            num_attention_heads=4, intermediate_size=256,
            max_position_embeddings=64, type_vocab_size=2,
            layer_norm_eps=1e-12, hidden_act="gelu")
BERT_BATCH, BERT_SEQ, BERT_VALID_ROW1 = 2, 7, 4

GPT2 = dict(vocab_size=503, n_embd=64, n_layer=2, n_head=4, n_positions=64,
            layer_norm_epsilon=1e-5, activation_function="gelu_new")
GPT2_BATCH, GPT2_SEQ = 2, 9
PROMPT_LEN, NEW_TOKENS = 5, 8


def ensure_venv():
    python = os.path.join(VENV, "bin", "python")
    # Written last, so that an interrupted install is redone.
    done = os.path.join(VENV, "installed")
    if not os.path.exists(done):
        subprocess.check_call([sys.executable, "-m", "venv", VENV])
        pip = [python, "-m", "pip", "install", "--quiet"]
        subprocess.check_call(pip + ["--index-url", TORCH_CPU_INDEX, "torch"])
        subprocess.check_call(pip + PACKAGES[1:])
        open(done, "w").close()
    return python


def perturb(model, seed):
    """Replaces every parameter with seeded random values of a useful size.

    HF's init (std 0.02 weights, zero biases, unit LayerNorms) makes attention
    almost uniform and every bias and norm parameter trivial, which a wrong
    model could still match; here each one matters.
    """
    import torch
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):
            noise = torch.randn(p.shape, generator=gen, dtype=torch.float32)
            if p.dim() == 1 and ("LayerNorm" in name or ".ln_" in name):
                p.copy_((1.0 + 0.2 * noise) if name.endswith("weight") else 0.2 * noise)
            elif p.dim() == 1:
                p.copy_(0.1 * noise)
            elif name.endswith("wte.weight"):
                # Trained GPT-2's scale (std about 0.14): it is also the tied
                # LM head, so it sets how far apart the logits are.
                p.copy_(0.1 * noise)
            elif "embeddings" in name or name.endswith("wpe.weight"):
                # The real models' init scale (std 0.02): the first LayerNorm
                # sees a small variance, where its eps matters as it does in
                # a real checkpoint (a wrong eps moves the outputs by far
                # more than the tests' tolerance).
                p.copy_(0.02 * noise)
            else:
                # Scaled so that attention scores spread well beyond uniform.
                fan_in = p.shape[0] if "transformer.h." in name else p.shape[1]
                p.copy_(noise * (1.5 / fan_in ** 0.5))


def check_close(name, got, want, rtol, atol):
    import numpy as np
    if not np.allclose(got, want, rtol=rtol, atol=atol):
        err = np.max(np.abs(got - want))
        raise SystemExit(f"{name}: float32 and float64 runs differ by {err}")


def check_eps_matters(name, model, wrong_eps, run, want):
    """Fails unless a model with every LayerNorm's eps set to `wrong_eps`
    misses `want` by far more than the tests' tolerance (rtol = atol = 1e-4),
    so that the tests can tell a wrong eps."""
    import copy
    import numpy as np
    import torch
    wrong = copy.deepcopy(model)
    for module in wrong.modules():
        if isinstance(module, torch.nn.LayerNorm):
            module.eps = wrong_eps
    excess = np.max(np.abs(run(wrong) - want) / (1e-4 + 1e-4 * np.abs(want)))
    if excess < 10:
        raise SystemExit(f"{name}: eps {wrong_eps} is within {excess:.1f}x the tolerance")


def save(folder, **arrays):
    import numpy as np
    for key, value in arrays.items():
        np.save(os.path.join(folder, key + ".npy"), np.ascontiguousarray(value))


def make_bert(out):
    import numpy as np
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(10)
    config = BertConfig(**BERT, attn_implementation=ATTN_IMPLEMENTATION)
    model = BertModel(config).eval()
    perturb(model, 11)
    model.save_pretrained(out, safe_serialization=True)

    rng = np.random.RandomState(12)
    ids = rng.randint(1, BERT["vocab_size"], size=(BERT_BATCH, BERT_SEQ)).astype(np.int64)
    mask = np.ones((BERT_BATCH, BERT_SEQ), np.int64)
    mask[1, BERT_VALID_ROW1:] = 0
    ids[1, BERT_VALID_ROW1:] = 0  # [PAD]
    types = np.zeros((BERT_BATCH, BERT_SEQ), np.int64)
    types[0, 3:] = 1
    types[1, 2:BERT_VALID_ROW1] = 1

    def run(m, dtype):
        with torch.no_grad():
            o = m(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask),
                  token_type_ids=torch.from_numpy(types))
        h = o.last_hidden_state
        m_ = torch.from_numpy(mask).to(dtype).unsqueeze(-1)
        # sentence-transformers: Pooling(mean) then Normalize().
        pooled = (h * m_).sum(1) / m_.sum(1).clamp(min=1e-9)
        sentence = torch.nn.functional.normalize(pooled, p=2, dim=1)
        return [t.numpy() for t in (h, o.pooler_output, sentence)]

    hidden, pooler, sentence = run(model, torch.float32)
    ref = run(BertModel.from_pretrained(out).double().eval(), torch.float64)
    for n, a, b in zip(("last_hidden_state", "pooler_output", "sentence_embedding"),
                       (hidden, pooler, sentence), ref):
        check_close("bert " + n, a, b, 1e-4, 1e-5)
    check_eps_matters("bert", model, 1e-5, lambda m: run(m, torch.float32)[0], hidden)
    save(out, input_ids=ids, attention_mask=mask, token_type_ids=types,
         last_hidden_state=hidden, pooler_output=pooler, sentence_embedding=sentence)


def make_gpt2(out):
    import numpy as np
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(20)
    config = GPT2Config(**GPT2, bos_token_id=0, eos_token_id=0,
                        attn_implementation=ATTN_IMPLEMENTATION)
    model = GPT2LMHeadModel(config).eval()
    perturb(model, 21)
    assert model.lm_head.weight.data_ptr() == model.transformer.wte.weight.data_ptr()
    model.save_pretrained(out, safe_serialization=True)

    rng = np.random.RandomState(22)
    ids = rng.randint(0, GPT2["vocab_size"], size=(GPT2_BATCH, GPT2_SEQ)).astype(np.int64)
    with torch.no_grad():
        logits = model(input_ids=torch.from_numpy(ids)).logits.numpy()
        ref = GPT2LMHeadModel.from_pretrained(out).double().eval()
        check_close("gpt2 logits", logits,
                    ref(input_ids=torch.from_numpy(ids)).logits.numpy(), 1e-4, 1e-4)

    def logits_of(m):
        with torch.no_grad():
            return m(input_ids=torch.from_numpy(ids)).logits.numpy()
    check_eps_matters("gpt2", model, 1e-12, logits_of, logits)

    prompt = rng.randint(0, GPT2["vocab_size"], size=(1, PROMPT_LEN)).astype(np.int64)
    # No end-of-sequence token: greedy decoding always runs N steps.
    with torch.no_grad():
        tokens = model.generate(torch.from_numpy(prompt), do_sample=False,
                                max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS,
                                eos_token_id=None, pad_token_id=0,
                                attention_mask=torch.ones_like(torch.from_numpy(prompt)))
    tokens = tokens.numpy()
    assert tokens.shape == (1, PROMPT_LEN + NEW_TOKENS), tokens.shape
    assert (tokens[:, :PROMPT_LEN] == prompt).all()

    # The same greedy decoding by hand with the KV cache: step 0 is the
    # prefill's last position, step i > 0 one new token with past_key_values.
    steps = []
    with torch.no_grad():
        o = model(input_ids=torch.from_numpy(prompt), use_cache=True)
        for i in range(NEW_TOKENS):
            step = o.logits[:, -1, :]
            steps.append(step[0].numpy().copy())
            nxt = step.argmax(-1, keepdim=True)
            assert int(nxt) == tokens[0, PROMPT_LEN + i], (i, int(nxt))
            if i + 1 < NEW_TOKENS:
                o = model(input_ids=nxt, past_key_values=o.past_key_values, use_cache=True)
        decode = np.stack(steps)
        # Each decode step agrees with recomputing the whole growing sequence.
        full = model(input_ids=torch.from_numpy(tokens[:, :-1])).logits[0, PROMPT_LEN - 1:]
        check_close("gpt2 decode vs recompute", decode, full.numpy(), 1e-4, 1e-4)

    save(out, input_ids=ids, logits=logits, generate_prompt=prompt,
         generate_tokens=tokens, decode_logits=decode)


def generate(root):
    import numpy as np
    import torch
    import transformers
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    for family, make in (("bert", make_bert), ("gpt2", make_gpt2)):
        folder = os.path.join(root, family)
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        make(folder)
    with open(os.path.join(root, "provenance.json"), "w") as fh:
        json.dump({"torch": torch.__version__.split("+")[0],
                   "transformers": transformers.__version__,
                   "numpy": np.__version__,
                   "attn_implementation": ATTN_IMPLEMENTATION,
                   "bert": BERT, "gpt2": GPT2}, fh, indent=2, sort_keys=True)
        fh.write("\n")


def same_file(a, b):
    return os.path.exists(b) and filecmp.cmp(a, b, shallow=False)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--python", help="an interpreter that has " + ", ".join(PACKAGES))
    parser.add_argument("--check", action="store_true",
                        help="regenerate into a temporary folder and compare")
    parser.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not args.inside:
        python = args.python or ensure_venv()
        cmd = [python, os.path.abspath(__file__), "--inside"] + (["--check"] if args.check else [])
        return subprocess.call(cmd)
    if not args.check:
        generate(HERE)
        return 0
    tmp = tempfile.mkdtemp(prefix="tfm-hf-")
    try:
        generate(tmp)
        bad = [os.path.relpath(os.path.join(d, f), tmp)
               for d, _, files in os.walk(tmp) for f in files
               if not same_file(os.path.join(d, f),
                                os.path.join(HERE, os.path.relpath(os.path.join(d, f), tmp)))]
        if bad:
            print("differs from a fresh run:\n  " + "\n  ".join(sorted(bad)))
            return 1
        print("every file is byte-identical to a fresh run")
        return 0
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    sys.exit(main())
