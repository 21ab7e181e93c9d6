#!/usr/bin/env python3
"""Generate the decoder fixtures of tests/reference/decoders/.

Tiny randomly initialised `transformers` decoders, one per architecture that
examples/llama/llama.tfm compiles (LlamaForCausalLM with grouped-query
attention, Qwen2ForCausalLM with q/k/v biases, Gemma3ForCausalLM with
local/global layers), each saved twice:

  <arch>/model.safetensors + config.json   `save_pretrained`, as a user's
                                           checkpoint is
  <arch>/model.gguf                        the same weights as llama.cpp's
                                           convert_hf_to_gguf.py writes
                                           them (F32): its tensor names (the
                                           gguf package's own name map),
                                           its metadata keys, the Q/K row
                                           permutation of `llama` files and
                                           Gemma's +1 on norm weights

with what `transformers` computes from them (eager attention, float32):

  input_ids [2, 7], logits            a batch of two sequences
  generate_prompt [1, 5], generate_tokens [1, 13], decode_logits [8, vocab]
                                      greedy `generate` of 8 tokens, and each
                                      step's logits through the KV cache
                                      (checked here against recomputing the
                                      whole sequence)

and the same weights in other GGUF types, each with float64 references on
the file's own weights as gguf.quants.dequantize reads them
(<stem>.logits, .generate_tokens, .decode_logits; for blocks also
<stem>.q8act.*, the block layers' inputs rounded to 8 bits as tfm does):

  <arch>/model-f16.gguf                2-D weights F16
  <arch>/model-q.gguf                  Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 layers
  <arch>-kquant/model.gguf             a hidden-256 model of the class (no
                                       safetensors) in a Q4_K_M-like mix of
                                       Q4_K, Q5_K, Q6_K (kquants.py)

    python3 tests/reference/decoders/generate.py             # make a venv, install, run
    python3 tests/reference/decoders/generate.py --python P  # use interpreter P instead
    python3 tests/reference/decoders/generate.py --check     # fail unless a fresh run
                                                             # is byte-identical
"""

import argparse
import filecmp
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
VENV = os.path.join(HERE, ".venv")
PACKAGES = ["torch", "transformers", "safetensors", "numpy", "gguf==0.19.0"]
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
ATTN_IMPLEMENTATION = "eager"

COMMON = dict(vocab_size=64, hidden_size=32, num_attention_heads=4,
              num_key_value_heads=2, intermediate_size=48,
              max_position_embeddings=64)
# rope_theta other than every default, so that a key read wrongly shows.
LLAMA = dict(COMMON, num_hidden_layers=2, head_dim=8, rms_norm_eps=1e-5,
             rope_theta=20000.0, tie_word_embeddings=False)
# Linear RoPE scaling (positions divided by 2), which both formats state.
QWEN2 = dict(COMMON, num_hidden_layers=2, rms_norm_eps=1e-6,
             rope_theta=50000.0, tie_word_embeddings=True,
             rope_scaling=dict(rope_type="linear", factor=2.0))
# Six layers: five local (sliding window 4) and one global, Gemma 3's
# pattern; head_dim 16 is not hidden / heads, and the scalar is head_dim
# (what llama.cpp assumes for every Gemma 3 but the 27B).
GEMMA3 = dict(COMMON, num_hidden_layers=6, head_dim=16, rms_norm_eps=1e-6,
              sliding_window=4, query_pre_attn_scalar=16,
              hidden_activation="gelu_pytorch_tanh",
              rope_theta=1000000.0, rope_local_base_freq=10000.0,
              tie_word_embeddings=True)
# Qwen3: QK-norm before RoPE, no biases; head_dim 16 is not hidden / heads
# (as Qwen3-0.6B's 128 against 64).
QWEN3 = dict(COMMON, num_hidden_layers=2, head_dim=16, rms_norm_eps=1e-6,
             rope_theta=30000.0, tie_word_embeddings=True)
# Phi-3: fused qkv_proj and gate_up_proj, half of each head rotated
# (Phi-4-mini rotates 3/4), a sliding window of 4 under 7-token sequences.
PHI3 = dict(COMMON, num_hidden_layers=2, rms_norm_eps=1e-5, rope_theta=20000.0,
            partial_rotary_factor=0.5, sliding_window=4,
            original_max_position_embeddings=64, tie_word_embeddings=False)
# Phi-3 128k / Phi-3.5 / Phi-4-mini: LongRoPE, its short factors below the
# original context of 64 (the fixtures' sequences) and an attention factor
# for max_position_embeddings 4x the original.
PHI3_LONGROPE = dict(COMMON, num_hidden_layers=2, rms_norm_eps=1e-5,
                     max_position_embeddings=256,
                     original_max_position_embeddings=64,
                     sliding_window=None, tie_word_embeddings=False,
                     rope_parameters=dict(
                         rope_type="longrope", rope_theta=20000.0,
                         partial_rotary_factor=0.5, short_factor=[1.0, 1.5],
                         long_factor=[2.0, 3.0],
                         original_max_position_embeddings=64))
# gemma3-vlm: the gemma3 weights inside a Gemma3ForConditionalGeneration
# (with a tiny SigLIP vision tower the text-only forward never reads), as
# google/gemma-3-4b-it and larger are published: sharded, the text model's
# tensors under "language_model.model.", and a config.json whose
# text_config states little more than what differs from Gemma3TextConfig's
# defaults (so the converter's defaults are what a compiler must assume).
VLM_TEXT_CONFIG = dict(model_type="gemma3_text", vocab_size=64, hidden_size=32,
                       intermediate_size=48, num_hidden_layers=6,
                       num_attention_heads=4, num_key_value_heads=2,
                       head_dim=16, query_pre_attn_scalar=16, sliding_window=4)
VLM_VISION_CONFIG = dict(model_type="siglip_vision_model", hidden_size=16,
                         intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, image_size=16, patch_size=4)
VLM_SHARD_SIZE = "100KB"
BATCH, SEQ = 2, 7
PROMPT_LEN, NEW_TOKENS = 5, 8


def ensure_venv():
    python = os.path.join(VENV, "bin", "python")
    done = os.path.join(VENV, "installed")
    if not os.path.exists(done):
        subprocess.check_call([sys.executable, "-m", "venv", VENV])
        pip = [python, "-m", "pip", "install", "--quiet"]
        subprocess.check_call(pip + ["--index-url", TORCH_CPU_INDEX, "torch"])
        subprocess.check_call(pip + PACKAGES[1:])
        open(done, "w").close()
    return python


def perturb(model, seed, gemma):
    """Seeded random parameters of a useful size: norms away from 1, biases
    away from 0, attention far from uniform. The embedding is small (std
    0.02, as trained ones are), so that the first norm's eps matters."""
    import torch
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):
            noise = torch.randn(p.shape, generator=gen, dtype=torch.float32)
            if name.endswith("norm.weight"):
                # Gemma's RMSNorm multiplies by (1 + w).
                p.copy_(0.2 * noise if gemma else 1.0 + 0.2 * noise)
            elif p.dim() == 1:
                p.copy_(0.3 * noise)
            elif "embed_tokens" in name:
                p.copy_(0.02 * noise)
            else:
                p.copy_(noise * (1.5 / p.shape[1] ** 0.5))


def check_close(name, got, want):
    import numpy as np
    if not np.allclose(got, want, rtol=1e-4, atol=1e-4):
        raise SystemExit(f"{name}: differs by {np.max(np.abs(got - want))}")


def save(folder, **arrays):
    import numpy as np
    for key, value in arrays.items():
        np.save(os.path.join(folder, key + ".npy"), np.ascontiguousarray(value))


def permute_rows(w, n_head):
    """convert_hf_to_gguf.py's LlamaModel.permute: rows of each head
    reordered so that rotating adjacent pairs is rotate_half."""
    return (w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:])
            .swapaxes(1, 2).reshape(w.shape))


# model-q.gguf: the same weights as llama-quantize would leave a mixed
# 4/8-bit file, one block type per kind of tensor; norms and ffn_down (rows
# of 48, not whole blocks of 32) stay F32, as llama.cpp falls back for rows
# its blocks do not divide. The token embedding is also the (tied) LM head
# of qwen2 and gemma3.
QUANT_TYPES = {"token_embd": "Q8_0", "attn_q": "Q4_0", "attn_k": "Q5_0",
               "attn_v": "Q8_0", "attn_output": "Q4_1", "ffn_gate": "Q5_1",
               "ffn_up": "Q4_0", "output": "Q8_0"}


def legacy_types(mapped, data):
    kind = QUANT_TYPES.get(mapped.split(".")[-2])
    return kind if kind and data.ndim == 2 and data.shape[-1] % 32 == 0 else None


def f16_types(mapped, data):
    """model-f16.gguf: 2-D weights F16, norms and biases F32, as
    convert_hf_to_gguf.py --outtype f16 writes them."""
    return "F16" if data.ndim == 2 else None


def kquant_types(mapped, data):
    """<arch>-kquant/model.gguf: a Q4_K_M-like mix, as llama-quantize
    leaves it: attn_v, ffn_down and the token embedding / LM head in
    Q6_K, layer 1's attn_output in Q5_K, the other weights Q4_K."""
    if data.ndim != 2:
        return None
    part = mapped.split(".")[-2]
    if part in ("attn_v", "ffn_down", "token_embd", "output"):
        return "Q6_K"
    if part == "attn_output" and mapped.startswith("blk.1."):
        return "Q5_K"
    return "Q4_K"


FILE_TYPES = {None: "ALL_F32", legacy_types: "MOSTLY_Q4_0",
              f16_types: "MOSTLY_F16", kquant_types: "MOSTLY_Q4_K_M"}


def write_gguf(path, arch, config, state, types=None):
    """The checkpoint as convert_hf_to_gguf.py writes it, in F32; or with
    the block type `types(gguf_name, data)` names (None: F32)."""
    import gguf
    import numpy as np
    import kquants
    c = config
    writer = gguf.GGUFWriter(path, arch=arch)
    writer.add_context_length(c["max_position_embeddings"])
    writer.add_embedding_length(c["hidden_size"])
    writer.add_block_count(c["num_hidden_layers"])
    writer.add_feed_forward_length(c["intermediate_size"])
    writer.add_head_count(c["num_attention_heads"])
    writer.add_head_count_kv(c["num_key_value_heads"])
    writer.add_layer_norm_rms_eps(c["rms_norm_eps"])
    rope = c.get("rope_parameters", {})
    writer.add_rope_freq_base(c.get("rope_theta", rope.get("rope_theta")))
    if "rope_scaling" in c:
        assert c["rope_scaling"]["rope_type"] == "linear"
        writer.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)
        writer.add_rope_scaling_factor(c["rope_scaling"]["factor"])
    if "head_dim" in c:
        writer.add_key_length(c["head_dim"])
        writer.add_value_length(c["head_dim"])
    if arch == "llama":
        writer.add_rope_dimension_count(c["head_dim"])
    if arch == "phi3":
        # Phi3MiniModel: the rotated dims, the original context, the window
        # (0 for none), and for LongRoPE the factor lists as tensors and the
        # scale of cos and sin.
        rotary = c.get("partial_rotary_factor",
                       rope.get("partial_rotary_factor", 1.0))
        writer.add_rope_dimension_count(
            int(rotary * c["hidden_size"]) // c["num_attention_heads"])
        original = c["original_max_position_embeddings"]
        writer.add_rope_scaling_orig_ctx_len(original)
        writer.add_sliding_window(c["sliding_window"] or 0)
        if rope.get("rope_type") == "longrope":
            scale = c["max_position_embeddings"] / original
            writer.add_rope_scaling_attn_factors(
                math.sqrt(1 + math.log(scale) / math.log(original)))
            writer.add_tensor("rope_factors_long.weight",
                              np.array(rope["long_factor"], np.float32))
            writer.add_tensor("rope_factors_short.weight",
                              np.array(rope["short_factor"], np.float32))
    if arch == "gemma3":
        # Gemma3Model writes the window but neither the local layers' RoPE
        # base nor their pattern: llama.cpp assumes 10000 and every sixth
        # layer global. A model whose layer_types differ states the period
        # (llama.cpp's key, which tfm reads).
        writer.add_sliding_window(c["sliding_window"])
        if "layer_types" in c:
            writer.add_sliding_window_pattern(gemma_pattern(c["layer_types"]))
    writer.add_file_type(gguf.LlamaFileType[FILE_TYPES[types]])
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH[arch.upper()],
                                     c["num_hidden_layers"])
    for name in sorted(state):
        data = state[name].numpy().astype(np.float32)
        if arch == "llama" and ".q_proj." in name:
            data = permute_rows(data, c["num_attention_heads"])
        elif arch == "llama" and ".k_proj." in name:
            data = permute_rows(data, c["num_key_value_heads"])
        if arch == "gemma3" and name.endswith("norm.weight"):
            data = data + np.float32(1.0)
        mapped = names.get_name(name, try_suffixes=(".weight", ".bias"))
        if mapped is None:
            raise SystemExit(f"{arch}: the gguf package does not map {name}")
        kind = types(mapped, data) if types else None
        if kind in kquants.QUANTIZERS:
            qtype = gguf.GGMLQuantizationType[kind]
            writer.add_tensor(mapped, kquants.quantize(data, kind), raw_dtype=qtype)
        elif kind:
            qtype = gguf.GGMLQuantizationType[kind]
            writer.add_tensor(mapped, gguf.quants.quantize(data, qtype),
                              raw_dtype=qtype)
        else:
            writer.add_tensor(mapped, np.ascontiguousarray(data))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def gemma_pattern(layer_types):
    """The period P of layer_types (every P-th layer global)."""
    p = layer_types.index("full_attention") + 1
    assert all((t == "full_attention") == ((i + 1) % p == 0)
               for i, t in enumerate(layer_types)), layer_types
    return p


def make(out, arch, config_class, model_class, config, seed, quantized=True):
    import numpy as np
    import torch
    from safetensors.torch import load_file

    torch.manual_seed(seed)
    cfg = config_class(**config, bos_token_id=0, eos_token_id=None,
                       pad_token_id=0, attn_implementation=ATTN_IMPLEMENTATION)
    model = model_class(cfg).eval()
    perturb(model, seed + 1, gemma=arch == "gemma3")
    model.save_pretrained(out, safe_serialization=True)
    write_gguf(os.path.join(out, "model.gguf"), arch, config,
               load_file(os.path.join(out, "model.safetensors")))
    state = load_file(os.path.join(out, "model.safetensors"))
    files = (("model-f16.gguf", f16_types),
             ("model-q.gguf", legacy_types)) if quantized else ()
    for file, types in files:
        write_gguf(os.path.join(out, file), arch, config, state, types)

    rng = np.random.RandomState(seed + 2)
    ids = rng.randint(0, config["vocab_size"], size=(BATCH, SEQ)).astype(np.int64)
    with torch.no_grad():
        logits = model(input_ids=torch.from_numpy(ids)).logits.numpy()
        ref = model_class.from_pretrained(out).double().eval()
        check_close(arch + " logits f32 vs f64", logits,
                    ref(input_ids=torch.from_numpy(ids)).logits.numpy())

    prompt = rng.randint(0, config["vocab_size"], size=(1, PROMPT_LEN)).astype(np.int64)
    with torch.no_grad():
        tokens = model.generate(torch.from_numpy(prompt), do_sample=False,
                                max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS,
                                eos_token_id=None, pad_token_id=0,
                                attention_mask=torch.ones_like(torch.from_numpy(prompt)))
    tokens = tokens.numpy()
    assert tokens.shape == (1, PROMPT_LEN + NEW_TOKENS), tokens.shape
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
        full = model(input_ids=torch.from_numpy(tokens[:, :-1])).logits[0, PROMPT_LEN - 1:]
        check_close(arch + " decode vs recompute", decode, full.numpy())
    save(out, input_ids=ids, logits=logits, generate_prompt=prompt,
         generate_tokens=tokens, decode_logits=decode)
    for file, _ in files:
        got = file_reference(os.path.join(out, file), arch, cfg, model_class,
                             config, model.state_dict(), ids, prompt)
        report(arch + "/" + file, got, logits)


def unpermute_rows(w, n_head):
    """The inverse of permute_rows."""
    return (w.reshape(n_head, w.shape[0] // n_head // 2, 2, *w.shape[1:])
            .swapaxes(1, 2).reshape(w.shape))


def dequantized_state(path, arch, config, hf_names):
    """The GGUF file's tensors as `gguf.quants.dequantize` reads them, in
    float64 under transformers' names: llama's Q/K row permutation undone,
    and Gemma's +1 on norm weights taken off (exactly: transformers adds
    it back in float64)."""
    import gguf
    import numpy as np
    import torch
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH[arch.upper()],
                                     config["num_hidden_layers"])
    inverse = {names.get_name(n, try_suffixes=(".weight", ".bias")): n
               for n in hf_names}
    state, types = {}, {}
    for t in gguf.GGUFReader(path).tensors:
        w = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float64)
        w = w.reshape([int(n) for n in reversed(t.shape)])
        name = inverse[t.name]
        if arch == "llama" and ".q_proj." in name:
            w = unpermute_rows(w, config["num_attention_heads"])
        elif arch == "llama" and ".k_proj." in name:
            w = unpermute_rows(w, config["num_key_value_heads"])
        if arch == "gemma3" and name.endswith("norm.weight"):
            w = w - 1.0
        state[name] = torch.from_numpy(np.ascontiguousarray(w))
        types[name] = t.tensor_type.name
    return state, types


def round_inputs(x, block):
    """x rounded per block of `block` along its last dim as tfm's block GEMM
    rounds its input (tfm.packed_linear, llama.cpp's quantize_row_q8_0):
    d = max |x| / 127, q = x / d rounded to nearest even, clamped to
    [-127, 127]; the GEMM then sums d * q * w."""
    import torch
    blocks = x.reshape(*x.shape[:-1], x.shape[-1] // block, block)
    d = blocks.abs().amax(-1, keepdim=True) / 127
    inverse = torch.where(d > 0, 1 / torch.where(d > 0, d, torch.ones_like(d)),
                          torch.zeros_like(d))
    q = torch.clamp(torch.round(blocks * inverse), -127, 127)
    return (q * d).reshape(x.shape)


def round_block_inputs(model, types, tied):
    """Every nn.Linear of `model` whose file weight is in blocks rounds its
    input as tfm does (round_inputs; blocks of 16 for Q6_K, 32 for the
    others); the tied head is the token embedding's type."""
    import torch
    for name, module in model.named_modules():
        if not isinstance(module, torch.nn.Linear):
            continue
        kind = types.get(name + ".weight")
        if kind is None and tied and name == "lm_head":
            kind = types["model.embed_tokens.weight"]
        assert kind is not None, name
        if kind in ("F32", "F16"):
            continue
        block = 16 if kind == "Q6_K" else 32
        module.forward = (lambda forward, block: lambda x: forward(round_inputs(x, block)))(
            module.forward, block)


def file_reference(path, arch, cfg, model_class, config, hf_state, ids, prompt):
    """A float64 transformers forward pass on the file's own dequantized
    weights, saved beside it as <stem>.logits.npy (the batch `ids`),
    <stem>.generate_tokens.npy (greedy after `prompt`) and
    <stem>.decode_logits.npy (each step's logits through the KV cache,
    checked against recomputing the whole sequence). Returns the batch's
    logits."""
    import numpy as np
    import torch
    model = model_class(cfg).double().eval()
    state, types = dequantized_state(path, arch, config, list(hf_state))
    missing, unexpected = model.load_state_dict(state, strict=False)
    tied = bool(getattr(cfg, "tie_word_embeddings", False))
    assert not unexpected and set(missing) <= ({"lm_head.weight"} if tied else set()), \
        (missing, unexpected)
    if tied:
        assert model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr()
    with torch.no_grad():
        logits = model(input_ids=torch.from_numpy(ids)).logits.numpy()
        tokens = [int(t) for t in prompt[0]]
        o = model(input_ids=torch.from_numpy(prompt), use_cache=True)
        steps = []
        for i in range(NEW_TOKENS):
            step = o.logits[0, -1, :]
            steps.append(step.numpy().copy())
            tokens.append(int(step.argmax()))
            if i + 1 < NEW_TOKENS:
                o = model(input_ids=torch.tensor([[tokens[-1]]]),
                          past_key_values=o.past_key_values, use_cache=True)
        decode = np.stack(steps)
        full = model(input_ids=torch.tensor([tokens[:-1]])).logits[0, PROMPT_LEN - 1:]
        if not np.allclose(decode, full.numpy(), rtol=1e-9, atol=1e-9):
            raise SystemExit(f"{path}: decode differs from recompute by "
                             f"{np.max(np.abs(decode - full.numpy()))}")
    stem = os.path.splitext(path)[0]
    np.save(stem + ".logits.npy", logits)
    np.save(stem + ".generate_tokens.npy", np.array([tokens], dtype=np.int64))
    np.save(stem + ".decode_logits.npy", decode)
    if any(t not in ("F32", "F16") for t in types.values()):
        # The same forward with the inputs of the block layers rounded as
        # tfm rounds them (<stem>.q8act.*): the batch, and the greedy
        # sequence at once (each row's rounding is its own, so these are
        # also the cached steps' logits).
        round_block_inputs(model, types, tied)
        with torch.no_grad():
            np.save(stem + ".q8act.logits.npy",
                    model(input_ids=torch.from_numpy(ids)).logits.numpy())
            full = model(input_ids=torch.tensor([tokens[:-1]])).logits[0]
            np.save(stem + ".q8act.decode_logits.npy",
                    full[PROMPT_LEN - 1:].numpy())
    return logits


def report(what, got, f32):
    """How far the file's weights move the logits from the f32 model's, in
    units of their standard deviation (README's table)."""
    import numpy as np
    print(f"{what}: float64 reference vs f32 checkpoint max |diff| / std "
          f"{np.max(np.abs(got - f32)) / np.std(f32):.2e} (std {np.std(f32):.3f})")


# <arch>-kquant/: models whose rows hold whole super-blocks of 256, written
# only as a Q4_K_M-like GGUF file (kquant_types) with float64 references
# on its dequantized weights; no safetensors (the file is the checkpoint).
KQUANT = dict(vocab_size=64, hidden_size=256, num_attention_heads=4,
              num_key_value_heads=2, intermediate_size=512,
              num_hidden_layers=2, max_position_embeddings=64)
LLAMA_KQUANT = dict(KQUANT, head_dim=64, rms_norm_eps=1e-5,
                    rope_theta=20000.0, tie_word_embeddings=False)
QWEN2_KQUANT = dict(KQUANT, rms_norm_eps=1e-6, rope_theta=50000.0,
                    tie_word_embeddings=True)
# One local layer (window 4) and one global: the GGUF file states the
# period 2 under llama.cpp's sliding_window_pattern key.
GEMMA3_KQUANT = dict(KQUANT, head_dim=64, rms_norm_eps=1e-6,
                     sliding_window=4, query_pre_attn_scalar=64,
                     hidden_activation="gelu_pytorch_tanh",
                     rope_theta=1000000.0, rope_local_base_freq=10000.0,
                     tie_word_embeddings=True,
                     layer_types=["sliding_attention", "full_attention"])


def make_kquant(out, arch, config_class, model_class, config, seed):
    import numpy as np
    import torch
    torch.manual_seed(seed)
    cfg = config_class(**config, bos_token_id=0, eos_token_id=None,
                       pad_token_id=0, attn_implementation=ATTN_IMPLEMENTATION)
    model = model_class(cfg).eval()
    perturb(model, seed + 1, gemma=arch == "gemma3")
    cfg.save_pretrained(out)
    state = {k: v for k, v in model.state_dict().items()
             if not (config["tie_word_embeddings"] and k == "lm_head.weight")}
    write_gguf(os.path.join(out, "model.gguf"), arch, config, state, kquant_types)
    rng = np.random.RandomState(seed + 2)
    ids = rng.randint(0, config["vocab_size"], size=(BATCH, SEQ)).astype(np.int64)
    prompt = rng.randint(0, config["vocab_size"], size=(1, PROMPT_LEN)).astype(np.int64)
    save(out, input_ids=ids, generate_prompt=prompt)
    with torch.no_grad():
        f32 = model(input_ids=torch.from_numpy(ids)).logits.numpy()
    got = file_reference(os.path.join(out, "model.gguf"), arch, cfg,
                         model_class, config, state, ids, prompt)
    report(arch + "-kquant/model.gguf", got, f32)


def make_vlm(root):
    """gemma3-vlm/: gemma3/'s weights as a sharded
    Gemma3ForConditionalGeneration checkpoint under the published names.
    Its logits are gemma3/'s: checked here by loading it back."""
    import numpy as np
    import torch
    from safetensors.torch import load_file, save_file
    from transformers import Gemma3Config, Gemma3ForConditionalGeneration
    folder = os.path.join(root, "gemma3-vlm")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    config = dict(architectures=["Gemma3ForConditionalGeneration"],
                  model_type="gemma3", mm_tokens_per_image=4,
                  image_token_index=63, boi_token_index=61, eoi_token_index=62,
                  text_config=VLM_TEXT_CONFIG, vision_config=VLM_VISION_CONFIG)
    torch.manual_seed(60)
    model = Gemma3ForConditionalGeneration(Gemma3Config(
        **{k: v for k, v in config.items() if k not in ("architectures", "model_type")},
        attn_implementation=ATTN_IMPLEMENTATION)).eval()
    text = load_file(os.path.join(root, "gemma3", "model.safetensors"))
    missing, unexpected = model.model.language_model.load_state_dict(
        {k[len("model."):]: v for k, v in text.items()}, strict=True)
    assert not missing and not unexpected
    with tempfile.TemporaryDirectory() as tmp:
        model.save_pretrained(tmp, safe_serialization=True,
                              max_shard_size=VLM_SHARD_SIZE)
        with open(os.path.join(tmp, "model.safetensors.index.json")) as fh:
            index = json.load(fh)
        shards = sorted(set(index["weight_map"].values()))
        assert len(shards) > 1, shards

        def published(name):
            # transformers 5 saves under the published names already; an
            # older one may not.
            if name.startswith(("language_model.", "vision_tower.",
                                "multi_modal_projector.")):
                return name
            for new, old in (("model.language_model.", "language_model.model."),
                             ("model.vision_tower.", "vision_tower."),
                             ("model.multi_modal_projector.", "multi_modal_projector.")):
                if name.startswith(new):
                    return old + name[len(new):]
            raise SystemExit(f"gemma3-vlm: unexpected tensor {name}")
        weight_map = {}
        for shard in shards:
            tensors = load_file(os.path.join(tmp, shard))
            save_file({published(k): v.contiguous() for k, v in sorted(tensors.items())},
                      os.path.join(folder, shard), metadata={"format": "pt"})
            for k in tensors:
                weight_map[published(k)] = shard
    total = sum(os.path.getsize(os.path.join(folder, s)) for s in shards)
    with open(os.path.join(folder, "model.safetensors.index.json"), "w") as fh:
        json.dump({"metadata": {"total_size": total},
                   "weight_map": dict(sorted(weight_map.items()))}, fh, indent=2)
        fh.write("\n")
    with open(os.path.join(folder, "config.json"), "w") as fh:
        json.dump(config, fh, indent=2, sort_keys=True)
        fh.write("\n")
    ids = np.load(os.path.join(root, "gemma3", "input_ids.npy"))
    want = np.load(os.path.join(root, "gemma3", "logits.npy"))
    loaded = Gemma3ForConditionalGeneration.from_pretrained(
        folder, attn_implementation=ATTN_IMPLEMENTATION).eval()
    with torch.no_grad():
        got = loaded(input_ids=torch.from_numpy(ids)).logits.numpy()
    check_close("gemma3-vlm logits vs gemma3", got, want)


def generate(root):
    import numpy as np
    import torch
    import transformers
    import gguf
    from transformers import (Gemma3ForCausalLM, Gemma3TextConfig, LlamaConfig,
                              LlamaForCausalLM, Phi3Config, Phi3ForCausalLM,
                              Qwen2Config, Qwen2ForCausalLM, Qwen3Config,
                              Qwen3ForCausalLM)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    models = (("llama", LlamaConfig, LlamaForCausalLM, LLAMA, 30),
              ("qwen2", Qwen2Config, Qwen2ForCausalLM, QWEN2, 40),
              ("gemma3", Gemma3TextConfig, Gemma3ForCausalLM, GEMMA3, 50))
    for arch, config_class, model_class, config, seed in models:
        folder = os.path.join(root, arch)
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        make(folder, arch, config_class, model_class, config, seed)
    # Architectures checked in F32 (transformers and GGUF) only.
    more = (("qwen3", "qwen3", Qwen3Config, Qwen3ForCausalLM, QWEN3, 60),
            ("phi3", "phi3", Phi3Config, Phi3ForCausalLM, PHI3, 100),
            ("phi3-longrope", "phi3", Phi3Config, Phi3ForCausalLM,
             PHI3_LONGROPE, 110))
    for name, arch, config_class, model_class, config, seed in more:
        folder = os.path.join(root, name)
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        make(folder, arch, config_class, model_class, config, seed,
             quantized=False)
    make_vlm(root)
    kquant = (("llama", LlamaConfig, LlamaForCausalLM, LLAMA_KQUANT, 70),
              ("qwen2", Qwen2Config, Qwen2ForCausalLM, QWEN2_KQUANT, 80),
              ("gemma3", Gemma3TextConfig, Gemma3ForCausalLM, GEMMA3_KQUANT, 90))
    for arch, config_class, model_class, config, seed in kquant:
        folder = os.path.join(root, arch + "-kquant")
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        make_kquant(folder, arch, config_class, model_class, config, seed)
    with open(os.path.join(root, "provenance.json"), "w") as fh:
        json.dump({"torch": torch.__version__.split("+")[0],
                   "transformers": transformers.__version__,
                   "gguf": gguf.__version__ if hasattr(gguf, "__version__") else "0.19.0",
                   "numpy": np.__version__,
                   "attn_implementation": ATTN_IMPLEMENTATION,
                   "llama": LLAMA, "qwen2": QWEN2, "gemma3": GEMMA3,
                   "qwen3": QWEN3, "phi3": PHI3,
                   "phi3-longrope": PHI3_LONGROPE,
                   "llama-kquant": LLAMA_KQUANT, "qwen2-kquant": QWEN2_KQUANT,
                   "gemma3-kquant": GEMMA3_KQUANT,
                   "gemma3-vlm": {"text_config": VLM_TEXT_CONFIG,
                                  "vision_config": VLM_VISION_CONFIG,
                                  "max_shard_size": VLM_SHARD_SIZE}},
                  fh, indent=2, sort_keys=True)
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
    tmp = tempfile.mkdtemp(prefix="tfm-decoders-")
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
