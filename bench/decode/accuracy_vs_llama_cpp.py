#!/usr/bin/env python3
"""bench/decode/accuracy_vs_llama_cpp.py: how close tfm's and llama.cpp's
logits on a quantized GGUF file come to a float64 forward pass on that
file's own dequantized weights (issue 22: "quantized logits at least as close
to the float64 reference as llama.cpp's own").

    bench/decode/accuracy_vs_llama_cpp.py --llama-python VENV/bin/python
        --llama-quantize PATH [--types Q8_0,Q4_0,Q4_K_M,Q6_K]
        [--layers 4 --hidden 1024 --heads 16 --kv-heads 4 --ffn 2816
         --vocab 8192 --tokens 64 --seed 0] [--tfm-bin build/bin]
        [--work DIR]

Run it with an interpreter that has torch, transformers, numpy and gguf
(the gguf package's quantizers and GGUFReader; bench/models/.venv plus
`pip install --target DIR gguf` on PYTHONPATH works). It

  1. makes a random transformers LlamaForCausalLM of the given sizes
     (grouped-query attention, tied head; seeded), writes it as an F32 GGUF
     file as convert_hf_to_gguf.py would (Q/K rows permuted, llama.cpp's
     tokenizer keys with a placeholder vocabulary);
  2. quantizes that file with llama.cpp's own llama-quantize to each type;
  3. reads each quantized file back, dequantizes every tensor with
     gguf.quants.dequantize (the file's values), undoes the Q/K permutation
     and runs transformers' model in float64 on a prompt of --tokens ids:
     the reference;
  4. runs tfm (examples/llama/llama.tfm compiled against the file; tfm-run
     --output logits) and llama.cpp (llama-cpp-python, logits_all, its
     repacked weight layouts off as llama-bench's --repack 0) on the same
     prompt, one thread;
  5. prints, per type and runtime, the logits' error against the reference:
     RMS and max |error| over the reference's standard deviation, and how
     often the top-1 token agrees with the reference's.

Both runtimes quantize activations to 8-bit blocks inside their GEMMs, so
neither is exact; the benchmark, never the tests, uses llama.cpp.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
ROPE_THETA = 100000.0

LLAMA_CPP = r"""
import sys, numpy as np, llama_cpp
import llama_cpp.llama_cpp as low
path, ids_path, out = sys.argv[1:4]
default = low.llama_model_default_params
def no_repack():
    params = default()
    params.use_extra_bufts = False
    return params
low.llama_model_default_params = no_repack
ids = [int(i) for i in np.load(ids_path).reshape(-1)]
llm = llama_cpp.Llama(path, n_ctx=max(64, len(ids) + 8), n_batch=512,
                      n_threads=1, logits_all=True, verbose=False)
llm.eval(ids)
np.save(out, np.array(llm.scores[:len(ids)], dtype=np.float32))
"""


def permute_rows(w, n_head):
    """convert_hf_to_gguf.py's LlamaModel.permute."""
    return (w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:])
            .swapaxes(1, 2).reshape(w.shape))


def unpermute_rows(w, n_head):
    return (w.reshape(n_head, w.shape[0] // n_head // 2, 2, *w.shape[1:])
            .swapaxes(1, 2).reshape(w.shape))


def write_f32_gguf(path, config, state):
    import gguf
    import numpy as np
    c = config
    writer = gguf.GGUFWriter(path, arch="llama")
    writer.add_context_length(c.max_position_embeddings)
    writer.add_embedding_length(c.hidden_size)
    writer.add_block_count(c.num_hidden_layers)
    writer.add_feed_forward_length(c.intermediate_size)
    writer.add_head_count(c.num_attention_heads)
    writer.add_head_count_kv(c.num_key_value_heads)
    writer.add_layer_norm_rms_eps(c.rms_norm_eps)
    writer.add_rope_freq_base(ROPE_THETA)
    writer.add_rope_dimension_count(c.hidden_size // c.num_attention_heads)
    writer.add_vocab_size(c.vocab_size)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    # A placeholder SentencePiece vocabulary: llama.cpp loads no model
    # without one; the ids are what both runtimes read.
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    tokens += [f"t{i}" for i in range(len(tokens), c.vocab_size)]
    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_scores([0.0] * c.vocab_size)
    writer.add_token_types([2, 3, 3] + [6] * 256 + [1] * (c.vocab_size - 259))
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA,
                                     c.num_hidden_layers)
    mapping = {}
    for name in sorted(state):
        if name == "lm_head.weight":
            continue  # tied: the head reads token_embd
        data = state[name].numpy().astype(np.float32)
        if ".q_proj." in name:
            data = permute_rows(data, c.num_attention_heads)
        elif ".k_proj." in name:
            data = permute_rows(data, c.num_key_value_heads)
        mapped = names.get_name(name, try_suffixes=(".weight", ".bias"))
        mapping[mapped] = name
        writer.add_tensor(mapped, np.ascontiguousarray(data))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return mapping


def reference_logits(path, config, mapping, ids):
    """transformers' model in float64 on the file's dequantized weights."""
    import gguf
    import numpy as np
    import torch
    import transformers
    reader = gguf.GGUFReader(path)
    state, types = {}, {}
    for t in reader.tensors:
        values = gguf.quants.dequantize(t.data, t.tensor_type)
        values = np.asarray(values, dtype=np.float64).reshape(
            [int(d) for d in reversed(t.shape)])
        hf = mapping[t.name]
        if ".q_proj." in hf:
            values = unpermute_rows(values, config.num_attention_heads)
        elif ".k_proj." in hf:
            values = unpermute_rows(values, config.num_key_value_heads)
        state[hf] = torch.from_numpy(np.ascontiguousarray(values))
        types[t.tensor_type.name] = types.get(t.tensor_type.name, 0) + 1
    state["lm_head.weight"] = state["model.embed_tokens.weight"]
    model = transformers.LlamaForCausalLM(config).to(torch.float64).eval()
    model.load_state_dict(state, strict=True)
    with torch.no_grad():
        logits = model(torch.tensor(ids)[None]).logits[0]
    return logits.numpy(), types


def tfm_logits(tfm_bin, gguf_path, config, ids, work):
    import numpy as np
    so = gguf_path + ".so"
    capacity = 256
    subprocess.run([os.path.join(tfm_bin, "tfm-compile"),
                    os.path.join(ROOT, "examples", "llama", "llama.tfm"),
                    "--weights", gguf_path, "--set",
                    f"tfm.capacity={capacity}", "-o", so], check=True)
    head_dim = config.hidden_size // config.num_attention_heads
    cache = [config.num_hidden_layers, 1, config.num_key_value_heads,
             capacity, head_dim]
    np.save(os.path.join(work, "cache.npy"), np.zeros(cache, np.float32))
    np.save(os.path.join(work, "ids.npy"), np.array([ids], np.int64))
    np.save(os.path.join(work, "past.npy"), np.zeros([1], np.int64))
    out = os.path.join(work, "tfm_logits.npy")
    subprocess.run([os.path.join(tfm_bin, "tfm-run"), so, "--quiet",
                    "--threads", "1",
                    "--input", "input_ids=" + os.path.join(work, "ids.npy"),
                    "--input", "past=" + os.path.join(work, "past.npy"),
                    "--input", "k_cache=" + os.path.join(work, "cache.npy"),
                    "--input", "v_cache=" + os.path.join(work, "cache.npy"),
                    "--output", "logits=" + out], check=True,
                   stdout=subprocess.DEVNULL)
    return np.load(out)[0]


def errors(got, want):
    import numpy as np
    scale = want.std()
    diff = got.astype(np.float64) - want
    return (np.sqrt((diff ** 2).mean()) / scale, np.abs(diff).max() / scale,
            (got.argmax(-1) == want.argmax(-1)).mean())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--llama-python", required=True)
    p.add_argument("--llama-quantize", required=True)
    p.add_argument("--types", default="Q8_0,Q4_0,Q4_K_M,Q6_K")
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--hidden", type=int, default=1024)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--kv-heads", type=int, default=4)
    p.add_argument("--ffn", type=int, default=2816)
    p.add_argument("--vocab", type=int, default=8192)
    p.add_argument("--tokens", type=int, default=64)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--tfm-bin", default=os.path.join(ROOT, "build", "bin"))
    p.add_argument("--work", default="/tmp/tfm-accuracy-vs-llama-cpp")
    a = p.parse_args()

    import numpy as np
    import torch
    import transformers
    os.makedirs(a.work, exist_ok=True)
    torch.manual_seed(a.seed)
    config = transformers.LlamaConfig(
        vocab_size=a.vocab, hidden_size=a.hidden, intermediate_size=a.ffn,
        num_hidden_layers=a.layers, num_attention_heads=a.heads,
        num_key_value_heads=a.kv_heads, tie_word_embeddings=True,
        rope_theta=ROPE_THETA, rms_norm_eps=1e-5, max_position_embeddings=2048)
    model = transformers.LlamaForCausalLM(config).eval()
    # Norm weights away from 1, so that a runtime that ignored them shows.
    with torch.no_grad():
        for name, w in model.named_parameters():
            if name.endswith("norm.weight"):
                w.uniform_(0.5, 1.5)
    f32 = os.path.join(a.work, "model-f32.gguf")
    mapping = write_f32_gguf(f32, config, model.state_dict())
    rng = np.random.default_rng(a.seed)
    ids = [int(i) for i in rng.integers(259, a.vocab, a.tokens)]
    np.save(os.path.join(a.work, "ids.npy"), np.array([ids], np.int64))

    rows = []
    for kind in a.types.split(","):
        path = os.path.join(a.work, f"model-{kind}.gguf")
        subprocess.run([a.llama_quantize, f32, path, kind], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        want, types = reference_logits(path, config, mapping, ids)
        got_tfm = tfm_logits(a.tfm_bin, path, config, ids, a.work)
        out = os.path.join(a.work, f"llama_cpp_{kind}.npy")
        subprocess.run([a.llama_python, "-c", LLAMA_CPP, path,
                        os.path.join(a.work, "ids.npy"), out], check=True)
        got_llama = np.load(out)
        rows.append((kind, types, errors(got_tfm, want),
                     errors(got_llama, want), want.std()))
        print(json.dumps([kind, types, rows[-1][2], rows[-1][3]]),
              file=sys.stderr)

    print(f"Llama, {a.layers} layers, hidden {a.hidden}, {a.heads}/"
          f"{a.kv_heads} heads, FFN {a.ffn}, vocabulary {a.vocab} (tied), "
          f"{a.tokens} tokens; errors over the reference logits' std\n")
    print("| file | tensor types | runtime | RMS error | max error | "
          "top-1 agrees |")
    print("|---|---|---|--:|--:|--:|")
    for kind, types, tfm, llama, std in rows:
        mix = ", ".join(f"{t} {n}" for t, n in sorted(types.items()))
        for name, (rms, worst, top1) in (("tfm", tfm), ("llama.cpp", llama)):
            print(f"| {kind} | {mix} | {name} | {rms:.2e} | {worst:.2e} | "
                  f"{top1 * 100:.1f}% |")


if __name__ == "__main__":
    main()
